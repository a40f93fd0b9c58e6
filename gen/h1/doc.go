// Package h1 is the generator's HTTP/1.x response parser without I/O: a
// Parser is fed the bytes of one connection as they arrive, in any split,
// and reports the status, the framing (Content-Length, chunked, until
// close) and whether the connection may be reused, skipping body bytes in
// place. It never touches a socket or a clock, so the HTTP/1.1 engine
// (gen's h1Loop) drives it from its read buffer, and tests and fuzzers
// drive it with recorded bytes. It does not allocate.
//
// Imports: none of loadlab's packages; it does no I/O.
package h1
