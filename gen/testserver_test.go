package gen

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

// testServer is a raw TCP (or TLS) server on 127.0.0.1 for the
// misbehaving-server tests. Every accepted connection is handed to handle on
// its own goroutine; the server knows nothing of HTTP beyond what the
// helpers below give a handler. Cleanup closes the listener and every open
// connection and waits for the handlers.
type testServer struct {
	ln     net.Listener
	port   int
	handle func(net.Conn)
	tls    *tls.Config

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
}

// startServer starts a plain TCP test server.
func startServer(t testing.TB, handle func(net.Conn)) *testServer {
	return startServerTLS(t, nil, handle)
}

// startServerTLS starts a test server that wraps each connection in
// tls.Server(cfg) when cfg is not nil. The handshake runs lazily on the
// handler's first read or write, or explicitly via tlsHandshake.
func startServerTLS(t testing.TB, cfg *tls.Config, handle func(net.Conn)) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, handle: handle, tls: cfg, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// url returns scheme://127.0.0.1:port/path.
func (s *testServer) url(scheme string) string {
	return fmt.Sprintf("%s://127.0.0.1:%d/x", scheme, s.port)
}

func (s *testServer) accept() {
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

func (s *testServer) forget(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *testServer) close() {
	s.ln.Close()
	s.mu.Lock()
	s.done = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// readRequest reads one request head (the generator's GETs have no body).
func readRequest(br *bufio.Reader) error {
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

// eachRequest calls respond for every request on c until respond returns
// false, the client closes or a write fails.
func eachRequest(respond func(c net.Conn) bool) func(net.Conn) {
	return func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if err := readRequest(br); err != nil {
				return
			}
			if !respond(c) {
				return
			}
		}
	}
}

// reply answers every request with the same bytes, keeping the connection.
func reply(resp string) func(net.Conn) {
	return eachRequest(func(c net.Conn) bool {
		_, err := io.WriteString(c, resp)
		return err == nil
	})
}

// replyThenHold answers the first request with resp and then only reads
// until the client closes: whatever the client makes of resp, the server
// neither closes nor resets first.
func replyThenHold(resp string) func(net.Conn) {
	return eachRequest(func(c net.Conn) bool {
		if _, err := io.WriteString(c, resp); err != nil {
			return false
		}
		io.Copy(io.Discard, c)
		return false
	})
}

// replyThenClose answers the first request with resp and closes with FIN.
// The request has been read completely, so the close is a FIN, not a RST.
func replyThenClose(resp string) func(net.Conn) {
	return eachRequest(func(c net.Conn) bool {
		io.WriteString(c, resp)
		return false
	})
}

// answerAnything answers whatever arrives first (e.g. a TLS ClientHello,
// which is no HTTP request) with resp, as a plain HTTP server answers
// garbage with 400, then reads until the client closes.
func answerAnything(resp string) func(net.Conn) {
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

// holdForever reads and discards until the client closes: it never answers.
func holdForever(c net.Conn) { io.Copy(io.Discard, c) }

// resetOnAccept closes right after accept with SO_LINGER 0, which makes the
// kernel send RST instead of FIN.
func resetOnAccept(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// drip answers each request with resp one byte per interval.
func drip(resp string, interval time.Duration) func(net.Conn) {
	return eachRequest(func(c net.Conn) bool {
		for i := 0; i < len(resp); i++ {
			if _, err := c.Write([]byte{resp[i]}); err != nil {
				return false
			}
			time.Sleep(interval)
		}
		return true
	})
}

// tlsHandshake runs the server handshake and reports its error.
func tlsHandshake(c net.Conn) error {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return errors.New("not a TLS connection")
	}
	return tc.Handshake()
}
