package tls13

import (
	"crypto"
	"crypto/subtle"
)

// The server's flight as the client checks it: the ServerHello (or a
// HelloRetryRequest) and, after the encrypted messages, its Finished.

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
