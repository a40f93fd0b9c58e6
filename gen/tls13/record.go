package tls13

import (
	"crypto/cipher"
	"errors"
	"slices"
)

// TLS record framing (RFC 8446 §5).
const (
	RecordHeaderLen = 5
	MaxPlaintext    = 1 << 14
	MaxCiphertext   = MaxPlaintext + 256 // a protected record's body
)

// Record content types.
const (
	TypeChangeCipherSpec = 20
	TypeAlert            = 21
	TypeHandshake        = 22
	TypeApplicationData  = 23
)

var (
	// ErrBadRecordMAC: a protected record failed authentication.
	ErrBadRecordMAC = errors.New("tls: a record from the server failed authentication (bad record MAC)")
	// ErrNoContentType: a protected record held only padding.
	ErrNoContentType = errors.New("tls: the server sent a protected record without a content type")
	// ErrNotProtected: a record that must be protected had another outer type.
	ErrNotProtected = errors.New("tls: the server sent an unprotected record where a protected one was due")
)

// Nonce writes iv XOR seq (seq big-endian in the last 8 bytes) to n and
// returns it (RFC 8446 §5.3; RFC 7905 §2 for TLS 1.2 ChaCha20-Poly1305).
func Nonce(n, iv *[12]byte, seq uint64) []byte {
	*n = *iv
	for i := 0; i < 8; i++ {
		n[4+i] ^= byte(seq >> (56 - 8*i))
	}
	return n[:]
}

// SealRecord appends to dst one protected record holding p (at most
// MaxPlaintext bytes) of inner content type typ, with no padding. It
// allocates only when dst lacks capacity.
func SealRecord(dst []byte, aead cipher.AEAD, nonce []byte, typ uint8, p []byte) []byte {
	body := len(p) + 1 + aead.Overhead()
	start := len(dst)
	dst = slices.Grow(dst, RecordHeaderLen+body)[:start+RecordHeaderLen+body]
	hdr := dst[start : start+RecordHeaderLen]
	hdr[0], hdr[1], hdr[2], hdr[3], hdr[4] = TypeApplicationData, 3, 3, byte(body>>8), byte(body)
	pt := dst[start+RecordHeaderLen : start+RecordHeaderLen+len(p)+1]
	copy(pt, p)
	pt[len(p)] = typ
	aead.Seal(pt[:0], nonce, pt, hdr)
	return dst
}

// OpenRecord decrypts one whole protected record rec (header included)
// into out, which must have room for the body and must not overlap rec
// except exactly (out == rec[RecordHeaderLen:][:0] decrypts in place). It
// returns the inner content type and the plaintext, a prefix of out.
func OpenRecord(out []byte, aead cipher.AEAD, nonce []byte, rec []byte) (uint8, []byte, error) {
	hdr, body := rec[:RecordHeaderLen], rec[RecordHeaderLen:]
	if hdr[0] != TypeApplicationData {
		return 0, nil, ErrNotProtected
	}
	if len(body) < aead.Overhead()+1 {
		return 0, nil, ErrBadRecordMAC
	}
	pt, err := aead.Open(out[:0], nonce, body, hdr)
	if err != nil {
		return 0, nil, ErrBadRecordMAC
	}
	i := len(pt) - 1
	for i >= 0 && pt[i] == 0 {
		i--
	}
	if i < 0 {
		return 0, nil, ErrNoContentType
	}
	return pt[i], pt[:i], nil
}

// protection is one direction's handshake traffic protection.
type protection struct {
	aead  cipher.AEAD
	iv    [12]byte
	seq   uint64
	nonce [12]byte
}

func (p *protection) set(k *kdf, s *Suite, secret []byte, keyBuf []byte) error {
	key := k.expandLabel(keyBuf[:0], secret, "key", nil, s.KeyLen)
	k.expandLabel(p.iv[:0], secret, "iv", nil, len(p.iv))
	aead, err := NewAEAD(key, s.ChaCha)
	if err != nil {
		return err
	}
	p.aead, p.seq = aead, 0
	return nil
}

func (p *protection) seal(dst []byte, typ uint8, msg []byte) []byte {
	for len(msg) > 0 {
		m := min(len(msg), MaxPlaintext)
		dst = SealRecord(dst, p.aead, Nonce(&p.nonce, &p.iv, p.seq), typ, msg[:m])
		p.seq++
		msg = msg[m:]
	}
	return dst
}

func (p *protection) open(out, rec []byte) (uint8, []byte, error) {
	typ, pt, err := OpenRecord(out, p.aead, Nonce(&p.nonce, &p.iv, p.seq), rec)
	if err == nil {
		p.seq++
	}
	return typ, pt, err
}
