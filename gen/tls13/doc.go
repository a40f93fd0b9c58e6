// Package tls13 is a lean TLS 1.3 client handshake for load generation.
//
// It does what a client must do to make a server do all of its work in a
// full handshake, and little more: one ClientHello template per
// configuration (per handshake only the random and the legacy session id
// change), an X25519 or P-256 key share that is by default generated once
// per Client and reused, HelloRetryRequest (one group switch), the key
// schedule (HKDF-SHA256 and HKDF-SHA384), AES-128-GCM, AES-256-GCM and
// ChaCha20-Poly1305, the server's Finished checked and the client's sent.
// With roots configured, a certificate chain is verified once per distinct
// chain (a bounded cache keyed by the chain's SHA-256) and the server's
// CertificateVerify signature on every handshake; insecure mode skips both.
//
// The handshake is a non-blocking state machine: the caller reads from its
// socket, hands over the bytes (Handshake.Read consumes whole records), and
// sends what the handshake appends to its output buffer. No goroutine, no
// I/O, and no allocation per handshake in steady state beyond what the
// standard library's AEAD constructors make (four keys per handshake) and,
// with P-256, crypto/ecdh's.
//
// QUIC mode (Config.QUIC, RFC 9001): the same handshake without the record
// layer, for gen/quic. The ClientHello has an empty legacy session id and
// the quic_transport_parameters extension (the caller's bytes;
// Handshake.StartQUIC patches per-connection ones in), there is no
// ChangeCipherSpec, and messages go in and out per encryption level as
// raw bytes (Handshake.ReadQUIC: the CRYPTO frames' contents). The
// handshake and application traffic secrets (HandshakeSecrets,
// ApplicationKeys' Secret), the suite and the server's transport
// parameters are exposed as they become known; KDF derives QUIC's keys.
//
// What it does not do: TLS 1.2, session resumption (PSK), early data, client
// certificates (a CertificateRequest is answered with an empty Certificate),
// post-handshake messages (the record layer after the handshake is the
// caller's; see RecordKeys).
//
// Not safe for concurrent use: a Client and its Handshakes belong to one
// goroutine (one event loop). A Config and a Verifier may be shared.
//
// Imports: none of loadlab's packages (its tests use certs and internal/).
package tls13
