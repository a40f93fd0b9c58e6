// Package h2 is the generator's HTTP/2 client connection without I/O
// (RFC 9113): a Conn consumes the bytes read from a socket (Feed), holds the
// bytes to write (Pending, Wrote), opens streams for one pre-encoded request
// (Start) and reports responses to a Handler (status, body bytes, done,
// reset, refused, GOAWAY). It never touches a socket, a clock or a
// goroutine, so the TCP loop drives it with a thin adapter, and tests
// and fuzzers drive it with recorded bytes.
//
// # What it speaks
//
// The client preface, SETTINGS (ENABLE_PUSH 0, the stream window, and
// acknowledgements; the server's MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE
// and MAX_FRAME_SIZE are honoured), HEADERS and CONTINUATION (padding and
// priority fields skipped), DATA (padding removed), WINDOW_UPDATE on both
// sides, PING (acknowledged), RST_STREAM, GOAWAY; PRIORITY and unknown
// frames are ignored, PUSH_PROMISE is a protocol error. What a server's
// frames make the Conn queue is bounded, as in x/net/http2: more than
// MaxQueuedControlFrames control frames unwritten (acknowledgements the
// server asks for and does not read) end the connection with GOAWAY
// ENHANCE_YOUR_CALM, and with MaxPendingBytes unwritten Free is 0. The
// receive windows default to 16 MiB per stream and 1 GiB for the
// connection, replenished once half is used, so downloads are never
// throttled and WINDOW_UPDATEs are rare. Request bodies obey the server's
// windows.
//
// The request header block is encoded once per configuration (Template)
// with the static table and literals without indexing: it never touches a
// dynamic table, so every stream of every connection sends the same bytes.
// Response blocks are decoded for :status only, by a decoder that keeps the
// dynamic table in step without storing strings (see statusDecoder);
// Huffman coding comes from golang.org/x/net/http2/hpack.
//
// # Driving it from the TCP loop
//
// A connection slot of a loop holds its socket (behind the same byte-stream
// seam as HTTP/1.1, plain or TLS), one Conn with MaxStreams = --streams
// (1 with --new-conn) and per-slot request state indexed by the slot
// numbers the Handler reports: intended, started and written times, the
// sha256 when verifying. The slot struct implements Handler (a pointer, so
// the calls allocate nothing). Per connection:
//
//   - Connected (TCP up; TLS handshake done through the HTTP/1.1 path with
//     NextProtos ["h2"], failing as a tls error when ALPN is not h2; h2c
//     with prior knowledge for http://): Reset, start one request (Free is 1
//     until the server's SETTINGS), flush.
//   - Readable: read until EAGAIN, or a budget of bytes per wakeup (the
//     rest after the loop's other connections), Feed each chunk. Handler
//     calls arrive inside Feed; the slot only records there (Response:
//     status; Body: bytes and hash; Done: record latency from intended,
//     free the request state; Reset: an error; Refused: requeue with its
//     intended time kept; GoAway: count). After the reads, refill: closed
//     loop starts Free() requests (each stream sends its next request as
//     soon as its response completes); open loop pops the pending queue
//     while Free() > 0. Then flush.
//   - Writable, and flush: write Pending through the seam, Wrote(n); the
//     requests started since the last flush get their written time when
//     their bytes leave. EAGAIN keeps EPOLLOUT armed.
//   - Feed returns a *ConnError, or the socket ends or fails: every Busy
//     slot fails (ConnError: parse; EOF: closed; errno: as HTTP/1.1), the
//     socket closes, the slot reconnects.
//   - Closing() and Active() == 0 (GOAWAY, stream ids used up): close the
//     socket and reconnect in the same slot; refused requests go first.
//   - Timeouts: the loop's scan finds busy request slots past --timeout and
//     calls Cancel (RST_STREAM CANCEL): a timeout error; the connection
//     lives on.
//
// Open loop: a due request takes a free stream on any connection of its
// loop: the loop keeps the connections with Free() > 0 where HTTP/1.1
// keeps its idle connections (a connection joins it again after a Feed
// that freed streams, or when the server raises its limit), else the
// request waits in the same pending queue, with the same coordinated-
// omission correction (latency from the intended time; the lag recorded
// when a stream was free). --new-conn: one stream per connection, the
// socket closed after its response, handshakes counted as for HTTP/1.1.
//
// Outcomes (the engine is gen/h2engine.go, h2loop.go, h2conn.go): a Done
// with 2xx is ok, other statuses are counted per code; Reset is the error
// class "stream_reset" with the RST_STREAM code in the sample message and a
// per-code count; Refused is not an error (requeued with its intended
// time, counted); streams lost when the connection ends after a GOAWAY
// with an error code are the class "goaway", GOAWAYs count per code; a
// ConnError with ENHANCE_YOUR_CALM (a bound above) is the class "h2.calm",
// any other ConnError "parse". The
// result says protocol "h2" and "streams" beside "connections".
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
//
// Imports: none of loadlab's packages; it does no I/O.
package h2
