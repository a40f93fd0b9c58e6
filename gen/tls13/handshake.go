package tls13

import (
	"crypto"
	"crypto/rand"
	"errors"
	"hash"
	"io"
	"slices"
)

// Handshake states.
const (
	stateIdle = iota
	stateServerHello
	stateServerHelloAfterRetry
	stateEncryptedExtensions
	stateCertificate // or CertificateRequest
	stateCertificateVerify
	stateFinished
	stateDone
	stateFailed
)

// maxMessage bounds one handshake message from the server (a Certificate
// with a long chain is the largest).
const maxMessage = 256 << 10

// Handshake is one connection's handshake. Its zero value is ready for
// Start; after the handshake it may be started again for another
// connection, reusing its buffers. Not safe for concurrent use.
type Handshake struct {
	c      *Client
	state  uint8
	suite  *Suite
	kdf    *kdf
	group  Group
	key    *keyPair
	fresh  keyPair // FreshKeyShare: this handshake's pair
	first  bool    // no record from the server yet
	retry  bool    // a HelloRetryRequest was answered
	sentCC bool    // the client's ChangeCipherSpec was sent

	transcript     hash.Hash // sha256 or sha384, chosen by the suite
	sha256, sha384 hash.Hash
	th             [64]byte // a transcript hash

	rnd []byte // random and legacy session id: 64 bytes
	ch  []byte // the ClientHello record last sent

	msg   []byte   // handshake bytes not yet processed
	chain [][]byte // the server's certificates (slices of msg)
	pub   crypto.PublicKey

	certReq    bool
	certReqCtx []byte

	in, out  protection // handshake traffic: server's, client's
	keyBuf   [32]byte
	secret   [64]byte // handshake secret, then master secret
	cHS, sHS [64]byte
	tmp      [64]byte
	tmp2     [64]byte
	client   RecordKeys
	server   RecordKeys
	scratch  []byte
	leaf     []byte
	alpn     string

	peerParams []byte // QUIC: the server's transport parameters
	params     []byte // QUIC: this connection's transport parameters
}

// Start begins a handshake for c and appends the ClientHello record to
// out (with Config.QUIC: the ClientHello message, to be sent in Initial
// packets' CRYPTO frames).
func (h *Handshake) Start(c *Client, out []byte) ([]byte, error) {
	return h.start(c, c.cfg.QUICTransportParams, out)
}

var errParamsLen = errors.New("tls13: StartQUIC's transport parameters differ in length from the Config's")

// StartQUIC is Start for a QUIC connection whose transport parameters
// (e.g. its initial_source_connection_id) differ from the Config's
// template: params must have the template's length; it replaces the
// template's bytes in this handshake's ClientHellos. The Config must have
// QUIC set.
func (h *Handshake) StartQUIC(c *Client, params, out []byte) ([]byte, error) {
	if !c.cfg.QUIC || len(params) != len(c.cfg.QUICTransportParams) {
		h.state = stateFailed
		return out, errParamsLen
	}
	return h.start(c, params, out)
}

func (h *Handshake) start(c *Client, params, out []byte) ([]byte, error) {
	h.c = c
	h.state = stateServerHello
	h.first = true
	h.suite, h.kdf, h.pub = nil, nil, nil
	h.retry, h.sentCC, h.certReq = false, false, false
	h.in, h.out = protection{}, protection{}
	h.msg = h.msg[:0]
	h.chain = h.chain[:0]
	h.leaf = h.leaf[:0]
	h.alpn = ""
	if h.sha256 == nil {
		h.sha256, h.sha384 = crypto.SHA256.New(), crypto.SHA384.New()
		h.rnd = make([]byte, 64)
	}
	src := c.rand
	if src == nil {
		src = rand.Reader
	}
	if _, err := io.ReadFull(src, h.rnd); err != nil {
		h.state = stateFailed
		return out, err
	}
	cfg := c.cfg
	h.group = cfg.Groups[0]
	h.ch = append(h.ch[:0], c.hello...)
	copy(h.ch[cfg.offRand:], h.rnd[:32])
	if cfg.offSID >= 0 {
		copy(h.ch[cfg.offSID:], h.rnd[32:])
	}
	if cfg.FreshKeyShare {
		if err := h.fresh.generate(h.group); err != nil {
			h.state = stateFailed
			return out, err
		}
		h.key = &h.fresh
		copy(h.ch[cfg.offShare:], h.key.pub)
	} else {
		h.key = &c.keys[groupIndex(h.group)]
	}
	h.peerParams = h.peerParams[:0]
	if cfg.QUIC {
		h.params = append(h.params[:0], params...)
		copy(h.ch[cfg.offParams:], h.params)
		return append(out, h.ch[RecordHeaderLen:]...), nil
	}
	return append(out, h.ch...), nil
}

// Done reports that the handshake completed.
func (h *Handshake) Done() bool { return h.state == stateDone }

// Suite returns the negotiated cipher suite (nil before the ServerHello).
func (h *Handshake) Suite() *Suite { return h.suite }

// Group returns the key-exchange group of the handshake.
func (h *Handshake) Group() Group { return h.group }

// Retried reports that the server sent a HelloRetryRequest.
func (h *Handshake) Retried() bool { return h.retry }

// ALPN returns the protocol the server selected, or "".
func (h *Handshake) ALPN() string { return h.alpn }

// Leaf returns the server's leaf certificate (DER) if Client.KeepLeaf was
// set, else nil. It is valid until the next Start.
func (h *Handshake) Leaf() []byte {
	if len(h.leaf) == 0 {
		return nil
	}
	return h.leaf
}

// ApplicationKeys returns the application traffic keys of a completed
// handshake: the client's (to write) and the server's (to read). They are
// valid until the next Start. With Config.QUIC only their Secret is set
// (QUIC derives its own keys from it).
func (h *Handshake) ApplicationKeys() (client, server *RecordKeys) {
	return &h.client, &h.server
}

var (
	errRecordOverflow  = fail(alertRecordOverflow, "tls: the server sent an oversized record")
	errNotTLS          = fail(alertDecodeError, "tls: first record does not look like a TLS handshake (is the server speaking plain HTTP? then use http://)")
	errUnexpectedRec   = fail(alertUnexpectedMessage, "tls: the server sent an unexpected record type during the handshake")
	errUnexpectedCCS   = fail(alertUnexpectedMessage, "tls: the server sent a malformed or misplaced ChangeCipherSpec")
	errMessageTooLarge = fail(alertIllegalParameter, "tls: the server sent a handshake message larger than 256 KiB")
	errKeyChange       = fail(alertUnexpectedMessage, "tls: the server's handshake message spans a key change")
	errNotStarted      = fail(alertInternalError, "tls: handshake not started (internal error)")
	errEmptyRecord     = fail(alertUnexpectedMessage, "tls: the server sent an empty handshake record")
)

// Read processes the whole records at the start of src and appends what
// must be sent to out (the client's Finished flight, a second ClientHello,
// or an alert on failure). used is how many bytes of src were consumed:
// the caller keeps src[used:], which starts with an incomplete record (or,
// once done, with records for the application traffic keys), and calls
// again when more bytes arrive. A non-nil err ends the handshake; out then
// holds the alert to send, if any.
func (h *Handshake) Read(src, out []byte) (used int, res []byte, done bool, err error) {
	if h.state == stateIdle || h.state >= stateDone {
		return 0, out, h.state == stateDone, errNotStarted
	}
	for len(src)-used >= RecordHeaderLen {
		if h.first && ((src[used] != TypeHandshake && src[used] != TypeAlert) || src[used+1] != 3) {
			out, err = h.fail(out, errNotTLS)
			return used, out, false, err
		}
		h.first = false
		n := int(src[used+3])<<8 | int(src[used+4])
		if n > MaxCiphertext {
			out, err = h.fail(out, errRecordOverflow)
			return used, out, false, err
		}
		end := used + RecordHeaderLen + n
		if end > len(src) {
			break
		}
		rec := src[used:end]
		used = end
		if out, err = h.record(rec, out); err != nil {
			out, err = h.fail(out, err)
			return used, out, false, err
		}
		if h.state == stateDone {
			return used, out, true, nil
		}
	}
	return used, out, false, nil
}

// fail ends the handshake with err, appending the alert to send.
func (h *Handshake) fail(out []byte, err error) ([]byte, error) {
	h.state = stateFailed
	e, ok := err.(*Error)
	if !ok || e.Alert == alertCloseNotify || h.c.cfg.QUIC {
		return out, err // QUIC: the alert is the caller's CRYPTO_ERROR (0x100 + Alert)
	}
	alert := [2]byte{2, e.Alert} // fatal
	if h.out.aead != nil {
		out = h.out.seal(out, TypeAlert, alert[:])
	} else {
		out = append(out, TypeAlert, 3, 3, 0, 2, alert[0], alert[1])
	}
	return out, err
}

// record processes one whole record.
func (h *Handshake) record(rec, out []byte) ([]byte, error) {
	body := rec[RecordHeaderLen:]
	switch rec[0] {
	case TypeHandshake:
		if h.in.aead != nil {
			return out, errKeyChange
		}
		if len(body) > MaxPlaintext {
			return out, errRecordOverflow
		}
		if len(body) == 0 {
			return out, errEmptyRecord
		}
		h.msg = append(h.msg, body...)
	case TypeChangeCipherSpec:
		// Middlebox compatibility (RFC 8446 §D.4): once the ServerHello
		// may have been sent, one byte 1, ignored.
		if len(body) != 1 || body[0] != 1 || (h.state == stateServerHello && !h.retry && h.suite == nil) {
			return out, errUnexpectedCCS
		}
		return out, nil
	case TypeAlert:
		return out, alertRecord(body) // unprotected: sent before the server had keys
	case TypeApplicationData:
		if h.in.aead == nil {
			return out, errUnexpectedRec
		}
		h.msg = slices.Grow(h.msg, len(body))
		typ, pt, err := h.in.open(h.msg[len(h.msg):], rec)
		if err != nil {
			return out, fail(alertBadRecordMAC, err.Error())
		}
		switch typ {
		case TypeHandshake:
			if len(pt) == 0 {
				return out, errEmptyRecord
			}
			h.msg = h.msg[:len(h.msg)+len(pt)]
		case TypeAlert:
			return out, alertRecord(pt)
		default:
			return out, errUnexpectedRec
		}
	default:
		return out, errUnexpectedRec
	}
	return h.messages(out)
}

// messages processes the complete handshake messages in h.msg.
func (h *Handshake) messages(out []byte) ([]byte, error) {
	off := 0
	var err error
	for len(h.msg)-off >= 4 {
		n := int(h.msg[off+1])<<16 | int(h.msg[off+2])<<8 | int(h.msg[off+3])
		if n > maxMessage {
			return out, errMessageTooLarge
		}
		if len(h.msg)-off-4 < n {
			break
		}
		m := h.msg[off : off+4+n]
		off += 4 + n
		if h.c.Trace != nil {
			h.c.Trace(m)
		}
		before, st := h.in.aead, h.state
		if out, err = h.message(m, out); err != nil {
			return out, err
		}
		keysChanged := h.in.aead != before || (h.state == stateEncryptedExtensions && st != stateEncryptedExtensions)
		if (keysChanged || h.state == stateDone || h.state == stateServerHelloAfterRetry) && off < len(h.msg) {
			// Keys change after a ServerHello or the server's Finished,
			// and a HelloRetryRequest ends the server's flight: nothing
			// may follow in the same record.
			return out, errKeyChange
		}
		if h.state == stateDone {
			break
		}
	}
	if off > 0 {
		h.msg = h.msg[:copy(h.msg, h.msg[off:])]
	}
	return out, nil
}

func unexpected(what string) error {
	return fail(alertUnexpectedMessage, "tls: the server sent an unexpected handshake message (wanted "+what+")")
}

// message processes one handshake message m (header included).
func (h *Handshake) message(m, out []byte) ([]byte, error) {
	typ, body := m[0], m[4:]
	switch h.state {
	case stateServerHello, stateServerHelloAfterRetry:
		if typ != typeServerHello {
			return out, unexpected("ServerHello")
		}
		sh, err := parseServerHello(body)
		if err != nil {
			return out, err
		}
		if sh.hrr {
			return h.helloRetry(&sh, m, out)
		}
		return out, h.serverHello(&sh, m)
	case stateEncryptedExtensions:
		if typ != typeEncryptedExtensions {
			return out, unexpected("EncryptedExtensions")
		}
		ee, err := parseEncryptedExtensions(body)
		if err != nil {
			return out, err
		}
		if ee.alpn != nil {
			h.alpn = ""
			for _, p := range h.c.cfg.ALPN {
				if p == string(ee.alpn) {
					h.alpn = p
				}
			}
			if h.alpn == "" {
				return out, errALPN
			}
		}
		if h.c.cfg.QUIC {
			if !ee.hasQUICParams {
				return out, errNoQUICParams
			}
			h.peerParams = append(h.peerParams[:0], ee.quicParams...)
		}
		h.transcript.Write(m)
		h.state = stateCertificate
	case stateCertificate:
		if typ == typeCertificateRequest && !h.certReq {
			ctx, err := parseCertificateRequest(body)
			if err != nil {
				return out, err
			}
			h.certReq = true
			h.certReqCtx = append(h.certReqCtx[:0], ctx...)
			h.transcript.Write(m)
			return out, nil
		}
		if typ != typeCertificate {
			return out, unexpected("Certificate")
		}
		ctx, chain, err := parseCertificate(body, h.chain[:0])
		h.chain = chain
		if err != nil {
			return out, err
		}
		if len(ctx) != 0 {
			return out, errCertContext
		}
		if h.c.KeepLeaf {
			h.leaf = append(h.leaf[:0], chain[0]...)
		}
		if v := h.c.cfg.Verifier; v != nil {
			chainKey(h.c.chainSum, chain, &h.c.chainKey, &h.c.lenBuf)
			if h.pub, err = v.check(&h.c.chainKey, chain); err != nil {
				return out, err
			}
		}
		h.transcript.Write(m)
		h.state = stateCertificateVerify
	case stateCertificateVerify:
		if typ != typeCertificateVerify {
			return out, unexpected("CertificateVerify")
		}
		scheme, sig, err := parseCertificateVerify(body)
		if err != nil {
			return out, err
		}
		if h.c.cfg.Verifier != nil {
			if err := h.c.sig.check(h.pub, scheme, sig, h.transcript.Sum(h.th[:0])); err != nil {
				return out, err
			}
		}
		h.transcript.Write(m)
		h.state = stateFinished
	case stateFinished:
		if typ != typeFinished {
			return out, unexpected("Finished")
		}
		return h.serverFinished(body, m, out)
	}
	return out, nil
}

var (
	errALPN          = fail(alertNoApplicationProtocol, "tls: the server selected an ALPN protocol the client did not offer")
	errCertContext   = fail(alertIllegalParameter, "tls: the server's Certificate has a non-empty request context")
	errVersion       = fail(alertProtocolVersion, "tls: the server did not select TLS 1.3 (it may support only older versions: offer TLS 1.2, with the standard implementation)")
	errLegacyVersion = fail(alertIllegalParameter, "tls: the server sent an incorrect legacy version")
	errSessionID     = fail(alertIllegalParameter, "tls: the server did not echo the legacy session id")
	errCompression   = fail(alertIllegalParameter, "tls: the server selected a compression method")
	errSuite         = fail(alertIllegalParameter, "tls: the server selected a cipher suite the client did not offer")
	errSuiteChanged  = fail(alertIllegalParameter, "tls: the server changed the cipher suite after a HelloRetryRequest")
	errGroup         = fail(alertIllegalParameter, "tls: the server's key share is for a group the client sent no share for")
	errNoKeyShare    = fail(alertMissingExtension, "tls: the server sent no key share (a PSK-only handshake is not supported)")
	errPSK           = fail(alertIllegalParameter, "tls: the server selected a pre-shared key the client did not offer")
	errTwoRetries    = fail(alertUnexpectedMessage, "tls: the server sent a second HelloRetryRequest")
	errRetryGroup    = fail(alertIllegalParameter, "tls: the server's HelloRetryRequest asks for a group the client does not support or already sent")
	errRetryUseless  = fail(alertIllegalParameter, "tls: the server sent a HelloRetryRequest that would not change the ClientHello")
	errNoQUICParams  = fail(alertMissingExtension, "tls: the QUIC server sent no quic_transport_parameters")
	errQUICLevel     = fail(alertUnexpectedMessage, "tls: the server sent handshake data at the wrong QUIC encryption level")
	errFinished      = fail(alertDecryptError, "tls: the server's Finished does not verify (wrong handshake transcript or keys)")
)

// PeerKey returns the leaf's public key (verified), or nil in insecure mode.
func (h *Handshake) PeerKey() crypto.PublicKey { return h.pub }
