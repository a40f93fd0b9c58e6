package backend

import (
	"io"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// newFastServer returns the fasthttp server for HTTP/1.1 (plain or TLS),
// tuned so the backend is never the bottleneck in front of a proxy.
func (s *Server) newFastServer(concurrency int) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:               s.handleFast,
		HeaderReceived:        upgradeHeader,
		Concurrency:           concurrency,
		ReadBufferSize:        8 << 10, // request headers up to 8 KiB
		WriteBufferSize:       8 << 10, // 1k answers fit with their headers in one write
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReduceMemoryUsage:     false,
		CloseOnShutdown:       true,
		// Keep-alive is on (DisableKeepalive false) and idle connections
		// never time out: proxies keep pools of them.
	}
}

// appHeader is AppHeader as fasthttp sets it without copying the name.
var appHeader = []byte(AppHeader)

// b2s views b as a string without copying; the string must not outlive b.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// handleFast answers one HTTP/1.1 request.
func (s *Server) handleFast(ctx *fasthttp.RequestCtx) {
	r := resolve(b2s(ctx.Path()))
	resp := &ctx.Response
	if r.kind == kindStats {
		var buf [96]byte
		resp.Header.SetContentType(ctJSON)
		resp.AppendBody(appendStats(buf[:0], s.Stats()))
		return
	}
	s.requests.Add(1)
	if a := s.appOf(ctx.Conn()); a != nil {
		a.requests.Add(1)
		resp.Header.SetCanonical(appHeader, a.name)
	}
	done := ctx.Done()
	s.stall.wait(done)

	switch r.kind {
	case kindBody:
		resp.Header.SetContentType(r.ctype)
		resp.SetBodyRaw(r.body)
	case kindClose:
		resp.Header.SetContentType(r.ctype)
		resp.SetBodyRaw(r.body)
		resp.SetConnectionClose()
	case kindDelay:
		sleep(r.delay, done)
		s.stall.wait(done)
		resp.Header.SetContentType(r.ctype)
		resp.SetBodyRaw(r.body)
	case kindChunked:
		resp.Header.SetContentType(r.ctype)
		// Size -1 makes fasthttp frame the stream as chunked, one chunk per
		// Read, each flushed.
		resp.SetBodyStream(&pieceReader{b: r.body}, -1)
	case kindStatus:
		resp.SetStatusCode(r.status)
		resp.Header.SetContentType(ctText)
		resp.SetBodyString(statusBody(r.status, fasthttp.StatusMessage(r.status)))
	case kindEcho:
		resp.Header.SetContentType(ctText)
		resp.SetBodyRaw(s.echoFast(ctx))
	case kindUpgrade:
		upgradeFast(ctx)
	case kindBad:
		resp.SetStatusCode(fasthttp.StatusBadRequest)
		resp.Header.SetContentType(ctText)
		resp.SetBodyString(r.msg)
	default:
		resp.SetStatusCode(fasthttp.StatusNotFound)
		resp.Header.SetContentType(ctText)
		resp.SetBodyString(notFoundBody)
	}
}

// echoFast builds the /echo body for an HTTP/1.1 request, headers in the
// order fasthttp keeps them (Host, Content-Length, Content-Type, User-Agent,
// Cookie first, then the rest as received).
func (s *Server) echoFast(ctx *fasthttp.RequestCtx) []byte {
	h := &ctx.Request.Header
	b := make([]byte, 0, 512)
	b = appendEchoHead(b, b2s(h.Method()), b2s(h.RequestURI()), b2s(h.Protocol()), ctx.RemoteAddr().String())
	for k, v := range h.All() {
		b = appendHeaderLine(b, k, v)
	}
	return b
}

// pieceReader yields b in chunkSize pieces, one per Read, so a chunked
// response carries several chunks.
type pieceReader struct {
	b   []byte
	off int
}

// Read copies the next piece of at most chunkSize bytes.
func (p *pieceReader) Read(dst []byte) (int, error) {
	if p.off >= len(p.b) {
		return 0, io.EOF
	}
	end := min(p.off+chunkSize, len(p.b))
	n := copy(dst, p.b[p.off:end])
	p.off += n
	return n, nil
}
