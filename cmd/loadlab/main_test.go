package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// asCLI, set in the environment of a re-executed test binary, makes it run
// the loadlab CLI with its arguments instead of the tests: the tests get a
// real loadlab process (signals, exit status, its own memory) without a
// separate build step.
const asCLI = "LOADLAB_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// cliCommand returns a command that runs loadlab with args in a child
// process (this test binary, re-executed).
func cliCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	return cmd
}

// captureRun runs the CLI in this process (a fresh command tree) with sub
// and args and returns the exit status and what it wrote to standard
// error.
func captureRun(t *testing.T, sub string, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := execute(append([]string{sub}, args...), io.Discard, &stderr)
	return code, stderr.String()
}

// freePort returns a loopback port with nothing listening on it.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// httpServer is a minimal keep-alive HTTP/1.1 server on 127.0.0.1 that
// answers every request with the same bytes. It is raw on purpose: one
// goroutine and one small buffer per connection, so that it holds 10,000
// connections cheaply.
type httpServer struct {
	ln    net.Listener
	resp  []byte
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	done  bool
}

func startHTTPServer(t *testing.T, resp string) *httpServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{ln: ln, resp: []byte(resp), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *httpServer) url() string { return "http://" + s.ln.Addr().String() + "/x" }

func (s *httpServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
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
		go s.serve(c)
	}
}

// serve answers each request head (GET, no body) with s.resp.
func (s *httpServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	br := bufio.NewReaderSize(c, 512)
	for {
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 && strings.TrimSpace(string(line)) == "" {
				break
			}
		}
		if _, err := c.Write(s.resp); err != nil {
			return
		}
	}
}

func (s *httpServer) close() {
	s.ln.Close()
	s.mu.Lock()
	s.done = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
