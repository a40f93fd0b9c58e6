package testutil

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The server answers each request on a kept-alive connection, and its
// cleanup closes connections the handler still holds.
func TestServerReplyKeepAlive(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	s := StartServer(t, Reply(resp))
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(resp))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(br, buf); err != nil || string(buf) != resp {
			t.Fatalf("request %d: %q, %v", i, buf, err)
		}
	}
	if !strings.HasSuffix(s.URL("http"), s.Addr()[strings.IndexByte(s.Addr(), ':'):]+"/x") {
		t.Errorf("URL %s does not name %s", s.URL("http"), s.Addr())
	}
}

func TestWaitFileLineAndProcesses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("starting\nready 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := WaitFileLine(t, p, "ready", time.Second); got != "ready 42" {
		t.Errorf("WaitFileLine = %q", got)
	}
	if Alive(DeadPID(t)) {
		t.Error("a reaped process is alive")
	}
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
}

func TestListensTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if !ListensTCP(t, port) {
		t.Fatalf("ListensTCP(%d) = false while listening", port)
	}
	ln.Close()
	if ListensTCP(t, port) {
		t.Fatalf("ListensTCP(%d) = true after Close", port)
	}
}

func TestRefusedPort(t *testing.T) {
	port := RefusedPort(t)
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("connected to the refused port %d", port)
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Errorf("dial: %v, want connection refused", err)
	}
	if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		ln.Close()
		t.Errorf("could listen on the held port %d", port)
	}
}
