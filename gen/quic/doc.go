// Package quic is a lean QUIC version 1 client (RFC 9000, 9001, 9002)
// that does one thing: a full handshake and one HTTP/3 GET (RFC 9114)
// per connection, for load generation. The TLS handshake is gen/tls13's
// in its QUIC mode; the wire format is in internal/wire, the HTTP/3 and
// QPACK subset in internal/h3.
//
// A Conn is a non-blocking state machine. It does no I/O and starts no
// goroutine: the caller owns the UDP socket, hands each received datagram
// to Conn.Receive, sends what Start, Receive and Timeout append to their
// output buffer (each call appends at most one datagram), and calls
// Timeout when Deadline passes. The client chooses its source connection
// ID (SCID, ConnIDLen bytes), which the server puts in every packet it
// sends: DestConnID extracts it from a datagram, so one socket per event
// loop can serve many Conns.
//
// What it does: Initial keys from a random destination connection ID,
// Handshake and 1-RTT keys with the negotiated suite (AES-128/256-GCM,
// ChaCha20-Poly1305), a client Initial padded to 1200 bytes, CRYPTO and
// STREAM reassembly by offset, ACKs in all three packet number spaces,
// Retry (integrity tag checked) and Version Negotiation, a simplified
// PTO (RFC 9002 §6.2: the client's flight is sent again, with backoff),
// the client's Finished coalesced with the control stream and the
// request, the response's :status and body bytes, then an application
// CONNECTION_CLOSE (H3_NO_ERROR). Flow-control windows are large enough
// (16 MiB by default) that a response needs no MAX_DATA.
//
// What it does not do: congestion control (the client sends a handful of
// packets per connection), loss recovery of anything but its own
// handshake flight and request, 0-RTT, resumption, key updates, path
// migration, connection ID changes, server push, QPACK's dynamic table,
// more than one request.
//
// Allocation: per handshake, the AEADs and AES header protection ciphers
// of the three encryption levels (crypto/aes and crypto/cipher allocate
// in their constructors; twelve constructor calls per connection) and
// what gen/tls13 allocates (P-256 key exchange, certificate checks on a
// verifier cache miss); Receive on an error allocates the *Error. The
// rest reuses the Conn's and the Client's buffers: start a Conn again
// for the next connection.
//
// Not safe for concurrent use: a Client and its Conns belong to one
// goroutine. A Config may be shared once prepared.
package quic
