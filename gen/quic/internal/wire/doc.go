// Package wire is QUIC version 1's wire format for a client (RFC 9000,
// RFC 9001): variable-length integers, long and short packet headers,
// packet numbers, frames, packet and header protection, transport
// parameters and the Retry integrity tag. One concern per file.
//
// Parsers take a byte slice and return values and slices of it; none
// allocates, none panics on any input (each has a fuzz test). Appenders
// append to a caller's buffer and allocate only when it lacks capacity.
// Nothing here keeps state across calls except Keys (one direction's
// packet protection), which is not safe for concurrent use.
//
// Imports: gen/tls13 (its KDF and AEADs) and golang.org/x/crypto.
package wire
