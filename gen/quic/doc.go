// Package quic is a lean QUIC version 1 client (RFC 9000, 9001, 9002)
// for load generation: a full handshake and HTTP/3 GETs (RFC 9114), one
// per connection, or with Config.KeepAlive many, one after another, on
// one connection. The TLS handshake is gen/tls13's in its QUIC mode; the
// wire format is in internal/wire, the HTTP/3 and QPACK subset in
// internal/h3.
//
// A Conn is a non-blocking state machine. It does no I/O and starts no
// goroutine: the caller owns the UDP socket, hands each received datagram
// to Conn.Receive, sends what Start, Receive, Timeout, Next and Close
// append to their output buffer (each call appends at most one
// datagram), and calls Timeout when Deadline passes. The client chooses
// its source connection ID (SCID, ConnIDLen bytes: Conn.Tag in the first
// two, big-endian, the rest random), which the server puts in every
// packet it sends: TagOf finds the Conn of a datagram without a map,
// DestConnID extracts the whole ID to compare with Conn.SCID, so one
// socket per event loop can serve many Conns.
//
// The Conn is split by role, as quic-go splits its connection: conn.go is
// the connection (its state, its API and timers, and the packets it
// receives: opened, checked, their keys), framer.go the frames those
// packets carry (ACK, CRYPTO, STREAM, MAX_* and the rest: what each
// changes), packer.go the one datagram each call sends (what is due, in
// which packet of which level, the probe timer it arms).
//
// What it does: Initial keys from a random destination connection ID,
// Handshake and 1-RTT keys with the negotiated suite (AES-128/256-GCM,
// ChaCha20-Poly1305), a client Initial padded to 1200 bytes, CRYPTO and
// STREAM reassembly by offset, ACKs in all three packet number spaces,
// Retry (integrity tag checked) and Version Negotiation, a simplified
// PTO (RFC 9002 §6.2: the client's flight, request or MAX_DATA is sent
// again, with backoff), the client's Finished coalesced with the
// control stream and the first request, the response's :status and
// body bytes, key updates started by the server (followed, any number
// of times), then an application CONNECTION_CLOSE (H3_NO_ERROR) —
// without KeepAlive at once, with it when the caller calls Close.
//
// Keep-alive: Next sends the next request on the next client
// bidirectional stream (4, 8, 12, ...) within the server's stream limit
// (initial_max_streams_bidi, MAX_STREAMS) and connection credit
// (initial_max_data, MAX_DATA); a request they do not allow yet waits in
// the Conn and goes out with the Receive that raises them. The client
// counts the bytes of every stream against its own window and sends
// MAX_DATA (received + Config.Window) when less than half is left,
// at once while a response arrives, else with the next packet; it
// never sends MAX_STREAM_DATA, so one response is at most Config.Window
// bytes. ACKs: while a response arrives every second ack-eliciting
// packet is acknowledged at once (the server's congestion control runs
// on them); after a complete response the ACK waits for the next
// request's packet, or for the delayed-ACK timer (20ms, below the 25ms
// max_ack_delay), so a closed-loop request costs one datagram sent.
// The server's control stream (its first unidirectional stream) is read
// for GOAWAY. Reusable says whether to call Next: not after GOAWAY, an
// error, MaxPackets packets, or idling close to the idle timeout (the
// smaller of the two sides' max_idle_timeout, less three probe
// timeouts). A request that times out (Config.Timeout) or is reset
// takes its connection down. A server that retires the connection ID
// the client uses ends the connection (ClassConnIDRetired): the client
// does not switch to another one.
//
// What it does not do: congestion control (the client sends one small
// request at a time), RTT measurement after the handshake, loss
// recovery of anything but its own handshake flight, requests and
// MAX_DATA, 0-RTT, resumption, key updates of its own (Reusable turns
// false at MaxPackets instead), path migration, connection ID changes,
// server push, QPACK's dynamic table, request bodies, more than one
// request in flight per connection.
//
// Allocation: per handshake, the AEADs and AES header protection ciphers
// of the three encryption levels (crypto/aes and crypto/cipher allocate
// in their constructors; twelve constructor calls per connection) and
// what gen/tls13 allocates (P-256 key exchange, certificate checks on a
// verifier cache miss); per key update by the server, two AEADs; per
// failure the *Error. A keep-alive request in steady state (after the
// first few on a connection) allocates nothing. The rest reuses the
// Conn's and the Client's buffers: start a Conn again for the next
// connection.
//
// Not safe for concurrent use: a Client and its Conns belong to one
// goroutine (one event loop); no method of a Conn may run concurrently
// with another of the same Conn or of a Conn of the same Client. A
// Config may be shared once prepared.
package quic
