package tls13

import (
	"crypto"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"hash"
	"io"
	"slices"
)

// Client is one event loop's handshake state: its copy of the ClientHello
// template, its key pairs (reused across handshakes unless
// Config.FreshKeyShare) and scratch space. Not safe for concurrent use.
type Client struct {
	cfg      *Config
	hello    []byte     // the template, this Client's key share filled in
	keys     [2]keyPair // X25519, P-256: generated when first needed
	have     [2]bool    // keys[i] generated
	kdfs     [2]*kdf    // SHA-256, SHA-384
	sig      *sigVerifier
	chainSum hash.Hash // SHA-256 over the chain, the Verifier's cache key
	chainKey [32]byte
	lenBuf   [4]byte

	// KeepLeaf makes each handshake keep a copy of the server's leaf
	// certificate (Handshake.Leaf), e.g. until its key type is noted.
	KeepLeaf bool
	// Trace, if set, is called with each handshake message from the
	// server (its 4-byte header included) before it is processed; msg is
	// valid only during the call. For debugging and capturing fuzz seeds.
	Trace func(msg []byte)

	rand io.Reader // tests: the source of randoms (nil: crypto/rand)
}

// NewClient returns a Client for cfg, which must be prepared.
func NewClient(cfg *Config) (*Client, error) {
	if cfg.hello == nil {
		panic("tls13: NewClient with a Config that was not prepared")
	}
	c := &Client{cfg: cfg, kdfs: [2]*kdf{newKDF(crypto.SHA256), newKDF(crypto.SHA384)}}
	if cfg.Verifier != nil {
		c.sig = newSigVerifier()
		c.chainSum = crypto.SHA256.New()
	}
	c.hello = slices.Clone(cfg.hello)
	if !cfg.FreshKeyShare {
		k, err := c.key(cfg.Groups[0])
		if err != nil {
			return nil, err
		}
		copy(c.hello[cfg.offShare:], k.pub)
	}
	return c, nil
}

func groupIndex(g Group) int {
	if g == P256 {
		return 1
	}
	return 0
}

// key returns the Client's reused key pair of group g.
func (c *Client) key(g Group) (*keyPair, error) {
	i := groupIndex(g)
	if !c.have[i] {
		if err := c.keys[i].generate(g); err != nil {
			return nil, err
		}
		c.have[i] = true
	}
	return &c.keys[i], nil
}

func (c *Client) kdfFor(s *Suite) *kdf {
	if s.Hash == crypto.SHA384 {
		return c.kdfs[1]
	}
	return c.kdfs[0]
}

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

// checkHello does the checks a ServerHello and a HelloRetryRequest share
// and returns the selected suite.
func (h *Handshake) checkHello(sh *serverHello) (*Suite, error) {
	if sh.version != versionTLS13 {
		return nil, errVersion
	}
	if sh.legacyVers != 0x0303 {
		return nil, errLegacyVersion
	}
	sid := h.rnd[32:]
	if h.c.cfg.QUIC {
		sid = sid[:0]
	}
	if string(sh.sessionID) != string(sid) {
		return nil, errSessionID
	}
	if sh.compression != 0 {
		return nil, errCompression
	}
	if sh.preSharedKey {
		return nil, errPSK
	}
	s := SuiteByID(sh.suite)
	if s == nil || !h.c.cfg.offers(sh.suite) {
		return nil, errSuite
	}
	if h.suite != nil && h.suite != s {
		return nil, errSuiteChanged
	}
	return s, nil
}

// useSuite selects the suite's hash for the transcript and key schedule.
func (h *Handshake) useSuite(s *Suite) {
	h.suite = s
	h.kdf = h.c.kdfFor(s)
	h.transcript = h.sha256
	if s.Hash == crypto.SHA384 {
		h.transcript = h.sha384
	}
	h.transcript.Reset()
}

// helloRetry answers a HelloRetryRequest with a second ClientHello.
func (h *Handshake) helloRetry(sh *serverHello, m, out []byte) ([]byte, error) {
	if h.state == stateServerHelloAfterRetry {
		return out, errTwoRetries
	}
	s, err := h.checkHello(sh)
	if err != nil {
		return out, err
	}
	cfg := h.c.cfg
	if sh.hasKeyShare && (!cfg.supports(sh.group) || sh.group == h.group) {
		return out, errRetryGroup
	}
	if !sh.hasKeyShare && len(sh.cookie) == 0 {
		return out, errRetryUseless
	}
	h.useSuite(s)
	// The first ClientHello enters the transcript as its hash (RFC 8446
	// §4.4.1).
	h.transcript.Write(h.ch[RecordHeaderLen:])
	sum := h.transcript.Sum(h.th[:0])
	h.transcript.Reset()
	h.scratch = append(h.scratch[:0], typeMessageHash, 0, 0, byte(len(sum)))
	h.transcript.Write(h.scratch)
	h.transcript.Write(sum)
	h.transcript.Write(m)
	if sh.hasKeyShare {
		h.group = sh.group
		if cfg.FreshKeyShare {
			if err := h.fresh.generate(h.group); err != nil {
				return out, fail(alertInternalError, "tls: "+err.Error())
			}
			h.key = &h.fresh
		} else if h.key, err = h.c.key(h.group); err != nil {
			return out, fail(alertInternalError, "tls: "+err.Error())
		}
	}
	random, sid := (*[32]byte)(h.rnd[:32]), (*[32]byte)(h.rnd[32:])
	h.ch, _, _, _ = cfg.appendHello(h.ch[:0], random, sid, h.group, h.key.pub, sh.cookie)
	h.ch[2] = 3 // record version TLS 1.2 after the first ClientHello, as servers expect
	if cfg.QUIC {
		copy(h.ch[cfg.offParams:], h.params)
	}
	h.transcript.Write(h.ch[RecordHeaderLen:])
	h.retry = true
	h.state = stateServerHelloAfterRetry
	if cfg.QUIC {
		return append(out, h.ch[RecordHeaderLen:]...), nil
	}
	out = appendCCS(out)
	h.sentCC = true
	return append(out, h.ch...), nil
}

func appendCCS(out []byte) []byte {
	return append(out, TypeChangeCipherSpec, 3, 3, 0, 1, 1)
}

// serverHello processes the ServerHello and derives the handshake keys.
func (h *Handshake) serverHello(sh *serverHello, m []byte) error {
	s, err := h.checkHello(sh)
	if err != nil {
		return err
	}
	if !sh.hasKeyShare || sh.share == nil {
		return errNoKeyShare
	}
	if sh.group != h.group {
		return errGroup
	}
	if !h.retry {
		h.useSuite(s)
		h.transcript.Write(h.ch[RecordHeaderLen:])
	}
	h.transcript.Write(m)
	shared, err := h.key.shared(sh.share)
	if err != nil {
		return err
	}
	k, size := h.kdf, h.kdf.size
	th := h.transcript.Sum(h.th[:0])
	hs := k.extract(h.secret[:0], k.derivedEarly[:size], shared)
	k.deriveSecret(h.cHS[:0], hs, "c hs traffic", th)
	k.deriveSecret(h.sHS[:0], hs, "s hs traffic", th)
	if !h.c.cfg.QUIC { // QUIC derives its own packet protection from the secrets
		if err := h.in.set(k, s, h.sHS[:size], h.keyBuf[:]); err != nil {
			return fail(alertInternalError, "tls: "+err.Error())
		}
		if err := h.out.set(k, s, h.cHS[:size], h.keyBuf[:]); err != nil {
			return fail(alertInternalError, "tls: "+err.Error())
		}
	}
	// master secret = Extract(Derive-Secret(hs, "derived", ""), 0)
	derived := k.deriveSecret(h.tmp[:0], hs, "derived", k.emptyHash[:size])
	k.extract(h.secret[:0], derived, k.zeros[:size])
	h.state = stateEncryptedExtensions
	return nil
}

// serverFinished checks the server's Finished, derives the application
// keys and appends the client's flight to out.
func (h *Handshake) serverFinished(body, m, out []byte) ([]byte, error) {
	k, size := h.kdf, h.kdf.size
	verify, err := parseFinished(body, size)
	if err != nil {
		return out, err
	}
	fk := k.expandLabel(h.tmp[:0], h.sHS[:size], "finished", nil, size)
	th := h.transcript.Sum(h.th[:0])
	want := k.hmac(h.tmp2[:0], fk, th, nil, nil)
	if subtle.ConstantTimeCompare(want, verify) != 1 {
		return out, errFinished
	}
	h.transcript.Write(m)
	th = h.transcript.Sum(h.th[:0])
	if h.c.cfg.QUIC {
		h.client.Secret = k.deriveSecret(h.client.buf[:0], h.secret[:size], "c ap traffic", th)
		h.server.Secret = k.deriveSecret(h.server.buf[:0], h.secret[:size], "s ap traffic", th)
		h.client.Key, h.server.Key = nil, nil
	} else {
		h.client.set(k, h.suite, k.deriveSecret(h.tmp[:0], h.secret[:size], "c ap traffic", th))
		h.server.set(k, h.suite, k.deriveSecret(h.tmp[:0], h.secret[:size], "s ap traffic", th))
	}

	// The client's flight: [ChangeCipherSpec], [empty Certificate],
	// Finished, under the client's handshake keys.
	msg := h.scratch[:0]
	if h.certReq {
		msg = append(msg, typeCertificate, 0, 0, byte(1+len(h.certReqCtx)+3), byte(len(h.certReqCtx)))
		msg = append(msg, h.certReqCtx...)
		msg = append(msg, 0, 0, 0)
		h.transcript.Write(msg)
		th = h.transcript.Sum(h.th[:0])
	}
	fk = k.expandLabel(h.tmp[:0], h.cHS[:size], "finished", nil, size)
	fin := len(msg)
	msg = append(msg, typeFinished, 0, 0, byte(size))
	msg = k.hmac(msg, fk, th, nil, nil)
	h.transcript.Write(msg[fin:])
	h.scratch = msg
	h.state = stateDone
	if h.c.cfg.QUIC {
		return append(out, msg...), nil
	}
	if !h.sentCC {
		out = appendCCS(out)
		h.sentCC = true
	}
	out = h.out.seal(out, TypeHandshake, msg)
	return out, nil
}

// Level is a QUIC encryption level that carries handshake messages.
type Level uint8

// The levels of ReadQUIC.
const (
	LevelInitial   Level = 0
	LevelHandshake Level = 2
)

// ReadQUIC processes handshake bytes the server sent at level (the
// in-order contents of its CRYPTO frames; messages may be split across
// calls) and appends what the client must send, as raw handshake messages,
// to out: after a HelloRetryRequest, a second ClientHello to send at the
// Initial level; once Done, the client's Finished (and an empty
// Certificate if one was requested), to send at the Handshake level. For
// a Handshake whose Config has QUIC set. A non-nil err ends the handshake;
// if it is an *Error, QUIC's CRYPTO_ERROR code is 0x100 + its Alert.
func (h *Handshake) ReadQUIC(level Level, data, out []byte) ([]byte, error) {
	if h.state == stateIdle || h.state >= stateDone || !h.c.cfg.QUIC {
		return out, errNotStarted
	}
	want := LevelHandshake
	if h.state == stateServerHello || h.state == stateServerHelloAfterRetry {
		want = LevelInitial
	}
	if level != want {
		return h.fail(out, errQUICLevel)
	}
	h.msg = append(h.msg, data...)
	out, err := h.messages(out)
	if err != nil {
		return h.fail(out, err)
	}
	return out, nil
}

// HandshakeSecrets returns the client's and the server's handshake
// traffic secrets once the ServerHello is processed (else nil), for QUIC's
// Handshake packet protection. Valid until the next Start.
func (h *Handshake) HandshakeSecrets() (client, server []byte) {
	if h.kdf == nil || h.state < stateEncryptedExtensions || h.state == stateFailed {
		return nil, nil
	}
	return h.cHS[:h.kdf.size], h.sHS[:h.kdf.size]
}

// QUICTransportParams returns the server's quic_transport_parameters
// (from EncryptedExtensions; nil before). Valid until the next Start.
func (h *Handshake) QUICTransportParams() []byte {
	if h.state <= stateEncryptedExtensions || h.state == stateFailed {
		return nil
	}
	return h.peerParams
}

// PeerKey returns the leaf's public key (verified), or nil in insecure mode.
func (h *Handshake) PeerKey() crypto.PublicKey { return h.pub }
