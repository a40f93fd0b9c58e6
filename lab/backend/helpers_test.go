package backend

import (
	"bufio"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/testutil"
)

// startTest starts a server on a free loopback port and closes it when the
// test ends.
func startTest(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testCert returns the shared test certificate (P-256, for 127.0.0.1 and
// localhost: testutil.CertDir) and a pool that trusts it.
func testCert(t testing.TB) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	p := testutil.Cert(t, certs.P256)
	return p.FullChain, p.Key, testutil.CertPool(t)
}

// get fetches url with c and returns the response (body read and closed).
func get(t testing.TB, c *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp, body
}

// plainClient is a net/http client that asks for nothing extra.
func plainClient() *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableCompression: true}}
}

// rawExchange sends req on a fresh TCP connection and returns the response
// header block (status line included) and a reader positioned at the body.
func rawExchange(t testing.TB, addr, req string) (net.Conn, string, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var head string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read response head: %v (so far %q)", err, head)
		}
		head += line
		if line == "\r\n" {
			return c, head, br
		}
	}
}
