package backend

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// DefaultH2MaxStreams is the SETTINGS_MAX_CONCURRENT_STREAMS the HTTP/2
// listener advertises unless Config.H2MaxStreams says otherwise (x/net's
// default).
const DefaultH2MaxStreams = 250

// sniffTimeout bounds how long a new TCP connection may take to show
// whether it speaks HTTP/1.1 or h2c (or to finish its TLS handshake).
const sniffTimeout = 10 * time.Second

// h2Server serves HTTP/2 connections with x/net's server on the same
// handler as HTTP/3; the dispatcher hands it the connections that chose h2.
type h2Server struct {
	srv    *http2.Server
	base   *http.Server // for graceful shutdown (GOAWAY on every connection)
	ctx    context.Context
	cancel context.CancelFunc // releases held requests on Close
	wg     sync.WaitGroup
	opts   http2.ServeConnOpts
}

func newH2Server(s *Server, maxStreams uint32) *h2Server {
	h := &h2Server{srv: &http2.Server{MaxConcurrentStreams: maxStreams}}
	h.base = &http.Server{Handler: h3Handler{s}}
	_ = http2.ConfigureServer(h.base, h.srv) // only fails for a TLS config it does not have
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.opts = http2.ServeConnOpts{Context: h.ctx, BaseConfig: h.base, Handler: h3Handler{s}}
	return h
}

// serve runs one HTTP/2 connection in the background.
func (h *h2Server) serve(c net.Conn) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer c.Close()
		h.srv.ServeConn(c, &h.opts)
	}()
}

// shutdown releases held requests, sends GOAWAY on every connection and
// waits up to grace for them to end; it reports whether they all did.
func (h *h2Server) shutdown(grace time.Duration) bool {
	h.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = h.base.Shutdown(ctx) // runs x/net's graceful shutdown hook
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// dispatcher accepts TCP (or TLS) connections and sends each to HTTP/2 or
// to fasthttp: over TLS by the ALPN protocol, in plain text by whether the
// client opens with the HTTP/2 preface (h2c with prior knowledge).
type dispatcher struct {
	ln     net.Listener // the counting listener, or a TLS listener over it
	tls    bool
	h2     *h2Server
	conns  chan net.Conn // to fasthttp
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup // sniffing goroutines
}

func newDispatcher(ln net.Listener, isTLS bool, h2 *h2Server) *dispatcher {
	d := &dispatcher{ln: ln, tls: isTLS, h2: h2, conns: make(chan net.Conn), closed: make(chan struct{})}
	go d.run()
	return d
}

func (d *dispatcher) run() {
	for {
		c, err := d.ln.Accept()
		if err != nil {
			d.Close()
			return
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.route(c)
		}()
	}
}

// route decides c's protocol and hands it on.
func (d *dispatcher) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	h2 := false
	if tc, ok := c.(*tls.Conn); ok {
		if err := tc.Handshake(); err != nil {
			c.Close()
			return
		}
		h2 = tc.ConnectionState().NegotiatedProtocol == http2.NextProtoTLS
	} else {
		var seen []byte
		seen, h2 = sniffPreface(c)
		if seen == nil {
			c.Close()
			return
		}
		c = &prefixConn{Conn: c, prefix: seen}
	}
	_ = c.SetReadDeadline(time.Time{})
	if h2 {
		d.h2.serve(c)
		return
	}
	select {
	case d.conns <- c:
	case <-d.closed:
		c.Close()
	}
}

// sniffPreface reads until the bytes either differ from the HTTP/2 client
// preface or match all of it, and returns them (nil if the connection
// ended first).
func sniffPreface(c net.Conn) ([]byte, bool) {
	const preface = http2.ClientPreface
	buf := make([]byte, len(preface))
	n := 0
	for n < len(preface) {
		k, err := c.Read(buf[n:])
		n += k
		if !bytes.Equal(buf[:n], []byte(preface[:n])) {
			return buf[:n], false
		}
		if err != nil {
			return nil, false
		}
	}
	return buf, true
}

// Accept returns the next connection for fasthttp.
func (d *dispatcher) Accept() (net.Conn, error) {
	select {
	case c := <-d.conns:
		return c, nil
	case <-d.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting (fasthttp's Shutdown calls it).
func (d *dispatcher) Close() error {
	d.once.Do(func() {
		close(d.closed)
		_ = d.ln.Close()
	})
	return nil
}

// Addr returns the listening address.
func (d *dispatcher) Addr() net.Addr { return d.ln.Addr() }

// prefixConn replays the sniffed bytes before reading on.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
