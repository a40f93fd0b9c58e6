package testutil

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"golang.org/x/net/http2"
)

// H2Options configure an H2Server.
type H2Options struct {
	// TLS serves ALPN h2 over TLS with the shared test certificate (P-256,
	// CertDir); else h2c with prior knowledge.
	TLS bool
	// Pipe serves only the connections of Dial, over net.Pipe: no listener.
	Pipe bool
	// MaxStreams is SETTINGS_MAX_CONCURRENT_STREAMS (0: x/net's default,
	// 250). Ignored with Server.
	MaxStreams uint32
	// Server, if set, returns the configuration of each connection's
	// http2.Server.
	Server func() *http2.Server
	// GoAwayAfter, if set, shuts each connection down gracefully once it
	// has received that many requests: x/net sends GOAWAY(2^31-1), a PING,
	// then GOAWAY with the last stream it took, as nginx does at
	// keepalive_requests.
	GoAwayAfter int64
}

// H2Server serves HTTP/2 with x/net's server until the test ends. Each
// connection gets its own http2.Server and base http.Server, so that one
// connection can be shut down (a graceful GOAWAY) without the others.
type H2Server struct {
	URL    string // http:// or https://127.0.0.1:PORT/ ("" with Pipe)
	CAFile string // with TLS: the CA's PEM

	Conns    atomic.Int64 // connections accepted
	Requests atomic.Int64 // requests handled
	Peak     atomic.Int64 // most requests in the handler at once, over all connections

	t        testing.TB
	opts     H2Options
	handler  http.Handler
	ln       net.Listener
	inflight atomic.Int64

	mu    sync.Mutex
	bases []*http.Server
	wg    sync.WaitGroup
}

// h2ConnKey finds a request's connection state in its context.
type h2ConnKey struct{}

type h2ConnState struct {
	base *http.Server
	n    atomic.Int64
}

// StartH2Server serves h over HTTP/2 until the test ends.
func StartH2Server(t testing.TB, h http.Handler, o H2Options) *H2Server {
	t.Helper()
	s := &H2Server{t: t, opts: o}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		n := s.inflight.Add(1)
		defer s.inflight.Add(-1)
		for p := s.Peak.Load(); n > p && !s.Peak.CompareAndSwap(p, n); p = s.Peak.Load() {
		}
		if cs, ok := r.Context().Value(h2ConnKey{}).(*h2ConnState); ok && o.GoAwayAfter > 0 && cs.n.Add(1) == o.GoAwayAfter {
			go cs.base.Shutdown(context.Background())
		}
		h.ServeHTTP(w, r)
	})
	if !o.Pipe {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s.ln, s.URL = ln, "http://"+ln.Addr().String()+"/"
		if o.TLS {
			s.ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{KeyPair(t, certs.P256)}, NextProtos: []string{http2.NextProtoTLS}})
			s.URL, s.CAFile = "https://"+ln.Addr().String()+"/", Cert(t, certs.P256).CA
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				c, err := s.ln.Accept()
				if err != nil {
					return
				}
				s.serve(c)
			}
		}()
	}
	t.Cleanup(func() {
		if s.ln != nil {
			s.ln.Close()
		}
		s.mu.Lock()
		for _, b := range s.bases {
			b.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// serve serves one connection on its own http2.Server.
func (s *H2Server) serve(c net.Conn) {
	base := &http.Server{Handler: s.handler}
	h2s := &http2.Server{MaxConcurrentStreams: s.opts.MaxStreams}
	if s.opts.Server != nil {
		h2s = s.opts.Server()
	}
	if err := http2.ConfigureServer(base, h2s); err != nil {
		s.t.Error(err)
	}
	s.mu.Lock()
	s.bases = append(s.bases, base)
	s.Conns.Add(1) // after the append: Shutdown(Conns-1) finds it
	s.mu.Unlock()
	ctx := context.WithValue(context.Background(), h2ConnKey{}, &h2ConnState{base: base})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer c.Close()
		if tc, ok := c.(*tls.Conn); ok {
			if err := tc.Handshake(); err != nil {
				return
			}
		}
		h2s.ServeConn(c, &http2.ServeConnOpts{Context: ctx, BaseConfig: base, Handler: s.handler})
	}()
}

// Dial returns a client connection to the server: over TCP, or with Pipe
// one end of a net.Pipe whose other end the server serves.
func (s *H2Server) Dial() net.Conn {
	if s.ln != nil {
		c, err := net.Dial("tcp", s.ln.Addr().String())
		if err != nil {
			s.t.Fatal(err)
		}
		return c
	}
	cli, srv := net.Pipe()
	s.serve(srv)
	return cli
}

// Shutdown gracefully shuts connection i (in the order they came) down:
// GOAWAY, then close once its streams are done.
func (s *H2Server) Shutdown(i int) {
	s.mu.Lock()
	b := s.bases[i]
	s.mu.Unlock()
	go b.Shutdown(context.Background())
}
