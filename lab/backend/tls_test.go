package backend

import (
	"bytes"
	"crypto/tls"
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

func TestH3UDPPortTaken(t *testing.T) {
	cert, key, _ := testCert(t)
	// Take a UDP port whose TCP twin is free (on a busy machine many TCP
	// port numbers are in use: try until one is).
	for try := 0; ; try++ {
		udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		addr := udp.LocalAddr().String()
		_, err = Start(Config{Listen: addr, TLSCert: cert, TLSKey: key, H3: true})
		if err != nil && strings.Contains(err.Error(), "listen on") && try < 50 {
			udp.Close() // the TCP port was taken: not this test's case
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "HTTP/3") {
			udp.Close()
			t.Fatalf("Start with the UDP port taken: err %v", err)
		}
		// The failed Start must have released its TCP listener.
		s, err := Start(Config{Listen: addr})
		udp.Close()
		if err != nil {
			t.Fatalf("TCP port not released after the failed Start: %v", err)
		}
		s.Close()
		return
	}
}
