// Package h2 is the generator's HTTP/2 client connection without I/O
// (RFC 9113): a Conn consumes the bytes read from a socket (Feed), holds the
// bytes to write (Pending, Wrote), opens streams for one pre-encoded request
// (Start) and reports responses to a Handler (status, body bytes, done,
// reset, refused, GOAWAY). It never touches a socket, a clock or a
// goroutine, so the epoll engine drives it with a thin adapter, and tests
// and fuzzers drive it with recorded bytes.
//
// # What it speaks
//
// The client preface, SETTINGS (ENABLE_PUSH 0, the stream window, and
// acknowledgements; the server's MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE
// and MAX_FRAME_SIZE are honoured), HEADERS and CONTINUATION (padding and
// priority fields skipped), DATA (padding removed), WINDOW_UPDATE on both
// sides, PING (acknowledged), RST_STREAM, GOAWAY; PRIORITY and unknown
// frames are ignored, PUSH_PROMISE is a protocol error. The receive windows
// default to 16 MiB per stream and 1 GiB for the connection, replenished
// once half is used, so downloads are never throttled and WINDOW_UPDATEs are
// rare. Request bodies obey the server's windows.
//
// The request header block is encoded once per configuration (Template)
// with the static table and literals without indexing: it never touches a
// dynamic table, so every stream of every connection sends the same bytes.
// Response blocks are decoded for :status only, by a decoder that keeps the
// dynamic table in step without storing strings (see statusDecoder);
// Huffman coding comes from golang.org/x/net/http2/hpack.
//
// # Allocation
//
// After NewConn, steady-state use (Start, Feed, Pending, Wrote, Reset)
// allocates nothing: frames are parsed in place, DATA payloads are handed
// to the Handler as sub-slices of Feed's input, the output and header-block
// buffers are reused. x/net/http2's Framer was measured and not used: it
// allocates a frame per HEADERS (SetReuseFrames covers DATA only) and its
// hpack.Decoder allocates per indexed literal (BenchmarkXNet* in the tests).
//
// # Not safe
//
// A Conn is owned by one goroutine; a Template is read-only and may be
// shared. Handler methods run inside Feed and must not call Feed, Start,
// Cancel, Shutdown or Reset. Slices passed to Handler.Body and returned by
// Pending are valid only until the next call.
package h2
