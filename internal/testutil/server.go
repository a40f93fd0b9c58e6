// Package testutil holds what the tests of several packages share: a raw
// TCP (or TLS) test server with handlers for well- and misbehaving HTTP
// servers, and helpers for the child processes tests start (the loadlab
// binary built once, processes that must exit, lines they print). Only
// tests import it.
//
// Imports: only certs and internal/pidstate among loadlab's packages, never
// gen, lab or cmd, so the tests of those packages can use it; only tests and
// internal/tlsservers import it.
package testutil

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a raw TCP (or TLS) server on 127.0.0.1 for tests that need a
// server whose behaviour they control. Every accepted connection is handed
// to the handler on its own goroutine; the server knows nothing of HTTP
// beyond what the helpers below give a handler. The test's cleanup closes
// the listener and every open connection and waits for the handlers.
type Server struct {
	Port int // the port the kernel gave the listener

	ln     net.Listener
	handle func(net.Conn)
	tls    *tls.Config

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
}

// StartServer starts a plain TCP test server on a port the kernel picks.
func StartServer(t testing.TB, handle func(net.Conn)) *Server {
	t.Helper()
	return StartServerTLS(t, nil, handle)
}

// StartServerTLS starts a test server that wraps each connection in
// tls.Server(cfg) when cfg is not nil. The handshake runs lazily on the
// handler's first read or write, or explicitly via TLSHandshake.
func StartServerTLS(t testing.TB, cfg *tls.Config, handle func(net.Conn)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln, Port: ln.Addr().(*net.TCPAddr).Port, handle: handle, tls: cfg, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// URL returns scheme://127.0.0.1:PORT/x.
func (s *Server) URL(scheme string) string {
	return fmt.Sprintf("%s://127.0.0.1:%d/x", scheme, s.Port)
}

// Addr returns 127.0.0.1:PORT.
func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if s.tls != nil {
			c = tls.Server(c, s.tls)
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer s.forget(c)
			s.handle(c)
		}()
	}
}

func (s *Server) forget(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) close() {
	s.ln.Close()
	s.mu.Lock()
	s.done = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// ReadRequest reads one request head of a GET (the generator's GETs have
// no body).
func ReadRequest(br *bufio.Reader) error {
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "GET ") {
		return fmt.Errorf("unexpected request line %q", line)
	}
	for {
		line, err = br.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\r\n" || line == "\n" {
			return nil
		}
	}
}

// EachRequest calls respond for every request on c until respond returns
// false, the client closes or a write fails. Its read buffer is small
// (512 bytes), so a server holds many thousand connections cheaply.
func EachRequest(respond func(c net.Conn) bool) func(net.Conn) {
	return func(c net.Conn) {
		br := bufio.NewReaderSize(c, 512)
		for {
			if err := ReadRequest(br); err != nil {
				return
			}
			if !respond(c) {
				return
			}
		}
	}
}

// Reply answers every request with the same bytes, keeping the connection.
func Reply(resp string) func(net.Conn) {
	return EachRequest(func(c net.Conn) bool {
		_, err := io.WriteString(c, resp)
		return err == nil
	})
}

// ReplyThenHold answers the first request with resp and then only reads
// until the client closes: whatever the client makes of resp, the server
// neither closes nor resets first.
func ReplyThenHold(resp string) func(net.Conn) {
	return EachRequest(func(c net.Conn) bool {
		if _, err := io.WriteString(c, resp); err != nil {
			return false
		}
		io.Copy(io.Discard, c)
		return false
	})
}

// ReplyThenClose answers the first request with resp and closes with FIN.
// The request has been read completely, so the close is a FIN, not a RST.
func ReplyThenClose(resp string) func(net.Conn) {
	return EachRequest(func(c net.Conn) bool {
		io.WriteString(c, resp)
		return false
	})
}

// AnswerAnything answers whatever arrives first (e.g. a TLS ClientHello,
// which is no HTTP request) with resp, as a plain HTTP server answers
// garbage with 400, then reads until the client closes.
func AnswerAnything(resp string) func(net.Conn) {
	return func(c net.Conn) {
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			return
		}
		if _, err := io.WriteString(c, resp); err != nil {
			return
		}
		io.Copy(io.Discard, c)
	}
}

// HoldForever reads and discards until the client closes: it never answers.
func HoldForever(c net.Conn) { io.Copy(io.Discard, c) }

// ResetOnAccept closes right after accept with SO_LINGER 0, which makes the
// kernel send RST instead of FIN.
func ResetOnAccept(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// Drip answers each request with resp one byte per interval.
func Drip(resp string, interval time.Duration) func(net.Conn) {
	return EachRequest(func(c net.Conn) bool {
		for i := 0; i < len(resp); i++ {
			if _, err := c.Write([]byte{resp[i]}); err != nil {
				return false
			}
			time.Sleep(interval)
		}
		return true
	})
}

// TLSHandshake runs the server handshake and reports its error.
func TLSHandshake(c net.Conn) error {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return errors.New("not a TLS connection")
	}
	return tc.Handshake()
}

// Body returns n bytes of the tests' fixed body pattern (a to z, again and
// again), so that a client can check what it read byte by byte.
func Body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}
