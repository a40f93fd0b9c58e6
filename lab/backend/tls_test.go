package backend

import (
	"bytes"
	"crypto/tls"
	"github.com/loadlab/loadlab/internal/testutil"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

func TestTLSBodies(t *testing.T) {
	cert, key, pool := testCert(t)
	s := startTest(t, Config{TLSCert: cert, TLSKey: key})
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL() = %s, want https", s.URL())
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
			DisableCompression: true,
			TLSClientConfig:    &tls.Config{RootCAs: pool, MinVersion: v, MaxVersion: v},
		}}
		for _, path := range []string{"/1k", "/100k", "/1m", "/chunked", "/close"} {
			resp, body := get(t, c, s.URL()+path)
			want := Body(path)
			if want == nil {
				want = body1k
			}
			if resp.StatusCode != 200 || !bytes.Equal(body, want) {
				t.Fatalf("TLS %x %s: status %d, %d bytes", v, path, resp.StatusCode, len(body))
			}
			if resp.TLS == nil || resp.TLS.Version != v {
				t.Fatalf("TLS %x %s: negotiated %+v", v, path, resp.TLS)
			}
		}
		c.CloseIdleConnections()
	}
	if st := s.Stats(); st.Requests != 10 || st.Accepted < 2 {
		t.Fatalf("Stats() = %+v, want 10 requests over at least 2 connections", st)
	}
}

func TestTLSRejectsTLS11(t *testing.T) {
	cert, key, pool := testCert(t)
	s := startTest(t, Config{TLSCert: cert, TLSKey: key})
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11},
	}}
	if resp, err := c.Get(s.URL() + "/1k"); err == nil {
		resp.Body.Close()
		t.Fatal("TLS 1.1 handshake succeeded")
	}
}

func TestH3SameEndpoints(t *testing.T) {
	cert, key, pool := testCert(t)
	s := startTest(t, Config{TLSCert: cert, TLSKey: key, H3: true})
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableCompression: true}
	defer tr.Close()
	c := &http.Client{Timeout: 20 * time.Second, Transport: tr}

	for _, path := range []string{"/1k", "/100k", "/1m", "/chunked", "/close", "/delay/5ms"} {
		resp, body := get(t, c, s.URL()+path)
		want := Body(path)
		if want == nil {
			want = body1k
		}
		if resp.ProtoMajor != 3 || resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Fatalf("h3 %s: %s status %d, %d bytes", path, resp.Proto, resp.StatusCode, len(body))
		}
		if path == "/1k" && (resp.ContentLength != Size1K || resp.Header.Get("Content-Type") != "application/json") {
			t.Fatalf("h3 /1k: length %d type %q", resp.ContentLength, resp.Header.Get("Content-Type"))
		}
	}

	resp, body := get(t, c, s.URL()+"/status/418")
	if resp.StatusCode != 418 || string(body) != "418 I'm a teapot\n" {
		t.Fatalf("h3 /status/418: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(t, c, s.URL()+"/missing"); resp.StatusCode != 404 {
		t.Fatalf("h3 /missing: %d", resp.StatusCode)
	}

	req, _ := http.NewRequest("GET", s.URL()+"/echo?x=1", nil)
	req.Header.Set("X-Test", "h3 echo")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	resp.Body.Close()
	lines := strings.Split(buf.String(), "\n")
	if lines[0] != "GET /echo?x=1 HTTP/3.0" || !strings.HasPrefix(lines[1], "RemoteAddr: 127.0.0.1:") ||
		!contains(lines, "Host: "+s.Addr()) || !contains(lines, "X-Test: h3 echo") {
		t.Fatalf("h3 echo:\n%s", buf.String())
	}

	// HTTP/3 requests count; QUIC connections are not TCP accepts.
	if st := s.Stats(); st.Requests != 9 || st.Accepted != 0 {
		t.Fatalf("Stats() = %+v, want 9 requests and no TCP accepts", st)
	}
	// HTTP/1.1 over TLS still works on the same port.
	h1 := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if resp, body := get(t, h1, s.URL()+"/1k"); resp.ProtoMajor != 1 || !bytes.Equal(body, body1k) {
		t.Fatalf("TCP alongside h3: %s, %d bytes", resp.Proto, len(body))
	}
}

// Start with the UDP port taken fails on HTTP/3 and releases the TCP
// listener it had opened on the same port number. The UDP port is the
// kernel's pick; when its TCP twin happens to be in use (an outgoing
// connection may hold it), the test picks another.
func TestH3UDPPortTaken(t *testing.T) {
	cert, key, _ := testCert(t)
	for attempt := 1; ; attempt++ {
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		addr := udp.LocalAddr().String()
		port := udp.LocalAddr().(*net.UDPAddr).Port
		_, err = Start(Config{Listen: addr, TLSCert: cert, TLSKey: key, H3: true})
		udp.Close()
		if err != nil && !strings.Contains(err.Error(), "HTTP/3") && (strings.Contains(err.Error(), "address already in use") || strings.Contains(err.Error(), "listen on")) && attempt < 50 {
			continue // the TCP port of that number was taken: another number
		}
		if err == nil || !strings.Contains(err.Error(), "HTTP/3") {
			t.Fatalf("Start with the UDP port taken: err %v", err)
		}
		if testutil.ListensTCP(t, port) {
			t.Fatalf("the failed Start still listens on TCP port %d", port)
		}
		return
	}
}
