package backend

import (
	"bytes"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// inmemServer serves the backend on an in-memory listener.
func inmemServer(tb testing.TB) (*Server, *fasthttputil.InmemoryListener) {
	ln := fasthttputil.NewInmemoryListener()
	s := &Server{ln: newCountingListener(ln), serveDone: make(chan struct{}), closeGrace: closeGrace}
	s.fast = s.newFastServer(DefaultConcurrency)
	go func() {
		defer close(s.serveDone)
		_ = s.fast.Serve(s.ln)
	}()
	tb.Cleanup(func() { _ = s.Close() })
	return s, ln
}

// BenchmarkServe1k measures full HTTP/1.1 round trips of /1k, client
// included, over an in-memory pipe and over loopback TCP.
func BenchmarkServe1k(b *testing.B) {
	b.Run("inmemory", func(b *testing.B) {
		_, ln := inmemServer(b)
		hc := &fasthttp.HostClient{Addr: "backend", Dial: func(string) (net.Conn, error) { return ln.Dial() }}
		bench1k(b, hc, "http://backend/1k")
	})
	b.Run("loopback", func(b *testing.B) {
		s := startTest(b, Config{})
		hc := &fasthttp.HostClient{Addr: s.Addr(), MaxConns: 64}
		bench1k(b, hc, s.URL()+"/1k")
	})
}

func bench1k(b *testing.B, hc *fasthttp.HostClient, url string) {
	b.ReportAllocs()
	b.SetBytes(Size1K)
	b.SetParallelism(16) // keep many requests in flight, like a proxy's pool
	b.RunParallel(func(pb *testing.PB) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(url)
		for pb.Next() {
			if err := hc.Do(req, resp); err != nil {
				b.Error(err)
				return
			}
			if resp.StatusCode() != 200 || len(resp.Body()) != Size1K {
				b.Errorf("status %d, %d bytes", resp.StatusCode(), len(resp.Body()))
				return
			}
		}
	})
}

// BenchmarkHandle1k measures the handler alone on a reused request context.
func BenchmarkHandle1k(b *testing.B) {
	s := &Server{}
	ctx := newCtx("/1k")
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		s.handleFast(ctx)
	}
}

func newCtx(uri string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, nil)
	return ctx
}

// TestFixedBodiesAreNotCopied checks the handler hands the precomputed
// bodies to fasthttp without a per-request copy or allocation.
func TestFixedBodiesAreNotCopied(t *testing.T) {
	s := &Server{}
	for _, path := range []string{"/1k", "/100k", "/1m"} {
		ctx := newCtx(path)
		allocs := testing.AllocsPerRun(100, func() {
			ctx.Response.Reset()
			s.handleFast(ctx)
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per request, want 0", path, allocs)
		}
		if body := ctx.Response.Body(); len(body) == 0 || &body[0] != &resolve(path).body[0] {
			t.Errorf("%s: response body is a copy of the precomputed body", path)
		}
		if !bytes.Equal(ctx.Response.Body(), Body(path)) {
			t.Errorf("%s: wrong body", path)
		}
	}
}
