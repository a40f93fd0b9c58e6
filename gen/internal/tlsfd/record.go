package tlsfd

import (
	"crypto"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/tls"
	"encoding/binary"
	"io"
	"slices"

	"github.com/loadlab/loadlab/gen/tls13"
)

// The TLS record layer after the handshake.
//
// The handshake (package tls13, or crypto/tls and uTLS) runs first; then a
// connection switches to this record layer, which protects application
// data with the negotiated AEAD without allocating: crypto/tls's Read
// allocates once per call. TLS 1.3 record protection and key derivation
// are tls13's (one copy for the handshake and the records after it).
//
// Supported: TLS 1.3 with its three suites, and TLS 1.2 with the AES-GCM and
// ChaCha20-Poly1305 suites. Anything else (TLS 1.2 CBC suites, TLS 1.2
// resumed sessions, whose master secret crypto/tls does not log) keeps
// crypto/tls's record layer for that connection.
//
// The record layer works on caller-provided buffers and does no I/O: see
// Conn.readRecords and Conn.write for the socket side.

// TLS record sizes (RFC 8446 §5.1, §5.2; RFC 5246 §6.2.3).
const (
	recordHeaderLen = 5
	maxPlaintext    = 1 << 14
	maxBodyTLS13    = maxPlaintext + 256
	maxBodyTLS12    = maxPlaintext + 2048
	// maxRecordLen bounds a whole record of either version; it is the size
	// of the per-connection buffer that holds the start of a partial record.
	maxRecordLen = recordHeaderLen + maxBodyTLS12
)

// TLS content types and handshake message types used here.
const (
	typeChangeCipherSpec = 20
	typeAlert            = 21
	typeHandshake        = 22
	typeApplicationData  = 23

	hsHelloRequest     = 0
	hsServerHello      = 2
	hsNewSessionTicket = 4
	hsKeyUpdate        = 24

	alertCloseNotify  = 0
	alertUserCanceled = 90
	alertLevelWarning = 1
)

var (
	errBadRecordMAC    = tls13.ErrBadRecordMAC
	errRecordOverflow  = newError("tls: the server sent an oversized record")
	errUnexpectedRec   = newError("tls: the server sent an unexpected record type after the handshake")
	errUnexpectedMsg   = newError("tls: the server sent an unexpected handshake message after the handshake")
	errRenegotiation   = newError("tls: the server asked for renegotiation, which loadlab does not support; disable it on the server")
	errBadKeyUpdate    = newError("tls: the server sent a malformed KeyUpdate")
	errBadAlert        = newError("tls: the server sent a malformed alert")
	errNoContentType   = tls13.ErrNoContentType
	errReadBufferSmall = newError("tls: read buffer too small for a record (internal error)")
	errRepliesUnread   = newError("tls: the server asks for answers (KeyUpdate) and does not read them: 256 KiB wait unsent")
)

// cipherSpec describes the record protection of a cipher suite.
type cipherSpec struct {
	keyLen int
	ivLen  int // TLS 1.3 and ChaCha20: the whole nonce; TLS 1.2 AES-GCM: the implicit salt
	chacha bool
	hash   crypto.Hash // TLS 1.3 key schedule, TLS 1.2 PRF
	suite  uint16
}

// cipherSpecFor returns the record protection of suite in version vers, and
// false for suites this record layer does not implement.
func cipherSpecFor(vers, suite uint16) (cipherSpec, bool) {
	spec, ok := cipherSpecOf(vers, suite)
	spec.suite = suite
	return spec, ok
}

func cipherSpecOf(vers, suite uint16) (cipherSpec, bool) {
	if vers == tls.VersionTLS13 {
		if s := tls13.SuiteByID(suite); s != nil {
			return cipherSpec{keyLen: s.KeyLen, ivLen: 12, chacha: s.ChaCha, hash: s.Hash}, true
		}
		return cipherSpec{}, false
	}
	if vers != tls.VersionTLS12 {
		return cipherSpec{}, false
	}
	switch suite {
	case tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256:
		return cipherSpec{keyLen: 16, ivLen: 4, hash: crypto.SHA256}, true
	case tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_RSA_WITH_AES_256_GCM_SHA384:
		return cipherSpec{keyLen: 32, ivLen: 4, hash: crypto.SHA384}, true
	case tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
		return cipherSpec{keyLen: 32, ivLen: 12, chacha: true, hash: crypto.SHA256}, true
	}
	return cipherSpec{}, false
}

func newAEAD(key []byte, chacha bool) (cipher.AEAD, error) { return tls13.NewAEAD(key, chacha) }

// prf12 is the TLS 1.2 PRF, P_hash(secret, label + seed) (RFC 5246 §5).
func prf12(h crypto.Hash, secret []byte, label string, seed []byte, length int) []byte {
	labelSeed := append([]byte(label), seed...)
	mac := hmac.New(h.New, secret)
	a := labelSeed
	out := make([]byte, 0, length+mac.Size())
	for len(out) < length {
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(nil)
		mac.Reset()
		mac.Write(a)
		mac.Write(labelSeed)
		out = mac.Sum(out)
	}
	return out[:length]
}

// direction is the protection state of one direction of a connection.
type direction struct {
	aead     cipher.AEAD
	iv       [12]byte // TLS 1.2 AES-GCM: the salt in iv[:4]
	explicit bool     // TLS 1.2 AES-GCM: 8-byte explicit nonce in each record
	seq      uint64
	nonce    [12]byte
	ad       [13]byte // TLS 1.2 additional data

	secret    [64]byte // TLS 1.3 traffic secret, for KeyUpdate
	secretLen int
}

// seqNonce returns iv XOR seq (RFC 8446 §5.3, RFC 7905 §2).
func (d *direction) seqNonce() []byte { return tls13.Nonce(&d.nonce, &d.iv, d.seq) }

// setKeys installs TLS 1.3 traffic keys. It allocates only the AEAD.
func (d *direction) setKeys(spec cipherSpec, k *tls13.RecordKeys) error {
	aead, err := newAEAD(k.Key, spec.chacha)
	if err != nil {
		return err
	}
	*d = direction{aead: aead, iv: k.IV}
	d.secretLen = copy(d.secret[:], k.Secret)
	return nil
}

// setTLS13 installs the keys of a TLS 1.3 traffic secret.
func (d *direction) setTLS13(spec cipherSpec, secret []byte) error {
	return d.setKeys(spec, tls13.TrafficKeys(tls13.SuiteByID(spec.suite), secret))
}

// update moves a TLS 1.3 direction to its next traffic secret (RFC 8446 §7.2).
func (d *direction) update(spec cipherSpec) error {
	s := d.secret[:d.secretLen]
	return d.setTLS13(spec, tls13.ExpandLabel(spec.hash, s, "traffic upd", nil, len(s)))
}

// recordLayer protects the application data of one connection. One side
// reads, the other writes: the client reads with the server's keys.
type recordLayer struct {
	vers    uint16
	spec    cipherSpec
	maxBody int
	in, out direction

	// Post-handshake handshake messages (TLS 1.3) may span records.
	hsHdr  [4]byte
	hsHdrN int
	hsLeft int

	// reply collects records the read side must send (a KeyUpdate answer).
	reply []byte

	tickets int // NewSessionTicket messages skipped
}

// newRecordLayer13 builds a TLS 1.3 record layer from the traffic secrets
// (RFC 8446 §7.3): readSecret protects what this side reads.
func newRecordLayer13(suite uint16, readSecret, writeSecret []byte) (*recordLayer, error) {
	spec, ok := cipherSpecFor(tls.VersionTLS13, suite)
	if !ok {
		return nil, newError("tls: cipher suite " + tls.CipherSuiteName(suite) + " not supported by the record layer")
	}
	if len(readSecret) != spec.hash.Size() || len(writeSecret) != len(readSecret) {
		return nil, newError("tls: traffic secret of the wrong length")
	}
	r := &recordLayer{}
	return r, r.reset13(spec, tls13.TrafficKeys(tls13.SuiteByID(suite), readSecret), tls13.TrafficKeys(tls13.SuiteByID(suite), writeSecret))
}

// reset13 makes r a fresh TLS 1.3 record layer with the given keys, reusing
// its buffers: read protects what this side reads. It allocates only the
// two AEADs.
func (r *recordLayer) reset13(spec cipherSpec, read, write *tls13.RecordKeys) error {
	*r = recordLayer{vers: tls.VersionTLS13, spec: spec, maxBody: maxBodyTLS13, reply: r.reply[:0]}
	if err := r.in.setKeys(spec, read); err != nil {
		return err
	}
	return r.out.setKeys(spec, write)
}

// newRecordLayer12 builds a TLS 1.2 record layer from the master secret and
// the hello randoms (RFC 5246 §6.3). client selects which half of the key
// block this side writes with.
func newRecordLayer12(suite uint16, master, clientRandom, serverRandom []byte, client bool) (*recordLayer, error) {
	spec, ok := cipherSpecFor(tls.VersionTLS12, suite)
	if !ok {
		return nil, newError("tls: cipher suite " + tls.CipherSuiteName(suite) + " not supported by the record layer")
	}
	if len(master) != 48 || len(clientRandom) != 32 || len(serverRandom) != 32 {
		return nil, newError("tls: TLS 1.2 secrets of the wrong length")
	}
	k, v := spec.keyLen, spec.ivLen
	kb := prf12(spec.hash, master, "key expansion", append(slices.Clip(serverRandom), clientRandom...), 2*k+2*v)
	ck, sk, civ, siv := kb[:k], kb[k:2*k], kb[2*k:2*k+v], kb[2*k+v:]
	if !client {
		ck, sk, civ, siv = sk, ck, siv, civ
	}
	r := &recordLayer{vers: tls.VersionTLS12, spec: spec, maxBody: maxBodyTLS12}
	for _, d := range []struct {
		dir     *direction
		key, iv []byte
	}{{&r.out, ck, civ}, {&r.in, sk, siv}} {
		aead, err := newAEAD(d.key, spec.chacha)
		if err != nil {
			return nil, err
		}
		d.dir.aead = aead
		copy(d.dir.iv[:], d.iv)
		d.dir.explicit = !spec.chacha
	}
	return r, nil
}

// seal appends p to dst as records of type typ, at most maxPlaintext bytes
// each, and returns the extended buffer. It allocates only when dst lacks
// capacity.
func (r *recordLayer) seal(dst []byte, typ uint8, p []byte) []byte {
	for len(p) > 0 {
		m := min(len(p), maxPlaintext)
		dst = r.sealOne(dst, typ, p[:m])
		p = p[m:]
	}
	return dst
}

func (r *recordLayer) sealOne(dst []byte, typ uint8, p []byte) []byte {
	d := &r.out
	tag := d.aead.Overhead()
	body := len(p) + tag
	if r.vers == tls.VersionTLS13 {
		dst = tls13.SealRecord(dst, d.aead, d.seqNonce(), typ, p)
		d.seq++
		return dst
	}
	if d.explicit {
		body += 8
	}
	start := len(dst)
	dst = slices.Grow(dst, recordHeaderLen+body)[:start+recordHeaderLen+body]
	hdr := dst[start : start+recordHeaderLen]
	payload := dst[start+recordHeaderLen:]
	hdr[0], hdr[1], hdr[2], hdr[3], hdr[4] = typ, 3, 3, byte(body>>8), byte(body)
	switch {
	case d.explicit:
		binary.BigEndian.PutUint64(payload[:8], d.seq)
		d.nonce = d.iv
		copy(d.nonce[4:], payload[:8])
		pt := payload[8 : 8+len(p)]
		copy(pt, p)
		d.aead.Seal(pt[:0], d.nonce[:], pt, d.ad12(typ, len(p)))
	default:
		pt := payload[:len(p)]
		copy(pt, p)
		d.aead.Seal(pt[:0], d.seqNonce(), pt, d.ad12(typ, len(p)))
	}
	d.seq++
	return dst
}

// ad12 returns the TLS 1.2 AEAD additional data: seq, type, version, length.
func (d *direction) ad12(typ uint8, n int) []byte {
	binary.BigEndian.PutUint64(d.ad[:8], d.seq)
	d.ad[8], d.ad[9], d.ad[10], d.ad[11], d.ad[12] = typ, 3, 3, byte(n>>8), byte(n)
	return d.ad[:]
}

// openOne decrypts one whole record into out, which must not overlap rec
// and must have room for its body, and returns the content type and the
// plaintext (a prefix of out).
func (r *recordLayer) openOne(out, rec []byte) (uint8, []byte, error) {
	d := &r.in
	hdr, body := rec[:recordHeaderLen], rec[recordHeaderLen:]
	if cap(out) < len(body) {
		return 0, nil, errReadBufferSmall
	}
	tag := d.aead.Overhead()
	if r.vers == tls.VersionTLS13 {
		typ, pt, err := tls13.OpenRecord(out, d.aead, d.seqNonce(), rec)
		if err == tls13.ErrNotProtected {
			err = errUnexpectedRec
		}
		if err == nil {
			d.seq++
		}
		return typ, pt, err
	}
	typ := hdr[0]
	var nonce, ct []byte
	if d.explicit {
		if len(body) < 8+tag {
			return 0, nil, errBadRecordMAC
		}
		d.nonce = d.iv
		copy(d.nonce[4:], body[:8])
		nonce, ct = d.nonce[:], body[8:]
	} else {
		if len(body) < tag {
			return 0, nil, errBadRecordMAC
		}
		nonce, ct = d.seqNonce(), body
	}
	pt, err := d.aead.Open(out[:0], nonce, ct, d.ad12(typ, len(ct)-tag))
	if err != nil {
		return 0, nil, errBadRecordMAC
	}
	d.seq++
	return typ, pt, nil
}

// open decrypts the whole records at the start of src and writes their
// application data to dst[:n]; dst must not overlap src and must be at least
// as long. Decrypting straight into dst saves moving the plaintext. used is
// where the first incomplete record starts (len(src) if none). err is io.EOF
// after a close_notify (nothing after it is processed) or a fatal error; n
// is valid either way.
func (r *recordLayer) open(dst, src []byte) (n, used int, err error) {
	for len(src)-used >= recordHeaderLen {
		body := int(src[used+3])<<8 | int(src[used+4])
		if body > r.maxBody {
			return n, used, errRecordOverflow
		}
		end := used + recordHeaderLen + body
		if end > len(src) {
			break
		}
		typ, data, err := r.openOne(dst[n:], src[used:end])
		if err != nil {
			return n, used, err
		}
		used = end
		if r.hsLeft > 0 || r.hsHdrN > 0 {
			if typ != typeHandshake {
				return n, used, errUnexpectedMsg // a handshake message was cut short
			}
		}
		switch typ {
		case typeApplicationData:
			n += len(data)
		case typeHandshake:
			if err := r.handshakeMessages(data); err != nil {
				return n, used, err
			}
		case typeAlert:
			if len(data) != 2 {
				return n, used, errBadAlert
			}
			switch {
			case data[1] == alertCloseNotify:
				return n, used, io.EOF
			case r.vers == tls.VersionTLS13 && data[1] == alertUserCanceled,
				r.vers == tls.VersionTLS12 && data[0] == alertLevelWarning:
				// not fatal
			default:
				return n, used, tls13.RemoteAlert{Alert: tls.AlertError(data[1])}
			}
		default:
			return n, used, errUnexpectedRec
		}
	}
	return n, used, nil
}

// handshakeMessages processes the handshake messages of one record:
// NewSessionTicket is skipped, KeyUpdate rekeys (RFC 8446 §4.6.3), a TLS 1.2
// HelloRequest is refused like crypto/tls does by default.
func (r *recordLayer) handshakeMessages(data []byte) error {
	if r.vers != tls.VersionTLS13 {
		if len(data) > 0 && data[0] == hsHelloRequest {
			return errRenegotiation
		}
		return errUnexpectedMsg
	}
	for len(data) > 0 {
		if r.hsHdrN < 4 {
			k := copy(r.hsHdr[r.hsHdrN:], data)
			r.hsHdrN += k
			data = data[k:]
			if r.hsHdrN < 4 {
				break
			}
			r.hsLeft = int(r.hsHdr[1])<<16 | int(r.hsHdr[2])<<8 | int(r.hsHdr[3])
			switch r.hsHdr[0] {
			case hsNewSessionTicket:
				r.tickets++
			case hsKeyUpdate:
				// One byte, and the last thing in its record: the next
				// record uses the new keys.
				if r.hsLeft != 1 || len(data) != 1 || data[0] > 1 {
					return errBadKeyUpdate
				}
				r.hsHdrN, r.hsLeft = 0, 0
				return r.keyUpdate(data[0] == 1)
			default:
				return errUnexpectedMsg
			}
		}
		k := min(len(data), r.hsLeft)
		data = data[k:]
		r.hsLeft -= k
		if r.hsLeft == 0 {
			r.hsHdrN = 0
		}
	}
	return nil
}

// keyUpdate moves the read side to the peer's next secret and, when the peer
// asks, answers with our own KeyUpdate and moves the write side too.
func (r *recordLayer) keyUpdate(requested bool) error {
	if err := r.in.update(r.spec); err != nil {
		return err
	}
	if !requested {
		return nil
	}
	return r.sendKeyUpdate(false)
}

// sendKeyUpdate appends a KeyUpdate to r.reply, sealed with the current
// keys, and moves the write side to its next secret.
func (r *recordLayer) sendKeyUpdate(request bool) error {
	msg := []byte{hsKeyUpdate, 0, 0, 1, 0}
	if request {
		msg[4] = 1
	}
	r.reply = r.sealOne(r.reply, typeHandshake, msg)
	return r.out.update(r.spec)
}
