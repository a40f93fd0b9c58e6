package tls13

// Level is a QUIC encryption level that carries handshake messages.
type Level uint8

// The QUIC mode (Config.QUIC): handshake messages in CRYPTO frames at
// their encryption levels, and the secrets QUIC derives its keys from.

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
