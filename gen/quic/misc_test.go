package quic

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen/tls13"
	"github.com/loadlab/loadlab/internal/testutil"
)

// udpLoop runs handle for each datagram a loopback socket receives until
// the test ends; handle may answer through the socket.
func udpLoop(t testing.TB, handle func(s *net.UDPConn, from *net.UDPAddr, b []byte)) *net.UDPConn {
	t.Helper()
	s, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 64<<10)
		for {
			n, from, err := s.ReadFromUDP(buf)
			if err != nil {
				return
			}
			handle(s, from, buf[:n])
		}
	}()
	t.Cleanup(func() { s.Close(); wg.Wait() })
	return s
}

func TestRetry(t *testing.T) {
	body := testutil.Body(5000)
	srv := startServer(t, bodyHandler(body), serverOpts{retry: true})
	cl := newTestClient(t, srv.ca, false, nil)
	d := newDriver(t, srv.addr)
	getN(t, d, cl, 2, body)
	var c Conn
	if err := d.run(cl, &c, 5*time.Second); err != nil || !c.retried {
		t.Fatalf("err %v, retried %v", err, c.retried)
	}
}

func TestHelloRetryRequest(t *testing.T) {
	body := testutil.Body(100)
	srv := startServer(t, bodyHandler(body), serverOpts{curve: []tls.CurveID{tls.CurveP256}})
	cl := newTestClient(t, srv.ca, false, func(c *Config) { c.TLS.Groups = []tls13.Group{tls13.X25519, tls13.P256} })
	d := newDriver(t, srv.addr)
	getN(t, d, cl, 2, body)
	var c Conn
	if err := d.run(cl, &c, 5*time.Second); err != nil || !c.Handshake().Retried() || c.Handshake().Group() != tls13.P256 {
		t.Fatalf("err %v retried %v group %v", err, c.Handshake().Retried(), c.Handshake().Group())
	}
}

func TestSuites(t *testing.T) {
	body := testutil.Body(3000)
	srv := startServer(t, bodyHandler(body), serverOpts{})
	for _, id := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		cl := newTestClient(t, srv.ca, false, func(c *Config) { c.TLS.Suites = []uint16{id} })
		d := newDriver(t, srv.addr)
		getN(t, d, cl, 1, body)
		var c Conn
		if err := d.run(cl, &c, 5*time.Second); err != nil || c.Handshake().Suite().ID != id {
			t.Fatalf("%#x: err %v suite %#x", id, err, c.Handshake().Suite().ID)
		}
	}
}

func TestVerificationFails(t *testing.T) {
	srv := startServer(t, bodyHandler(nil), serverOpts{})
	cl := newTestClient(t, testutil.OtherCA(t), false, nil)
	var c Conn
	err := newDriver(t, srv.addr).run(cl, &c, 5*time.Second)
	if !errors.Is(err, ErrTLS) {
		t.Fatalf("err %v, want the TLS class", err)
	}
}

// A server that answers every Initial with a Version Negotiation packet
// listing only other versions.
func TestVersionNegotiation(t *testing.T) {
	s := udpLoop(t, func(s *net.UDPConn, from *net.UDPAddr, b []byte) {
		if len(b) < 7 || b[0]&0x80 == 0 {
			return
		}
		dl := int(b[5])
		if len(b) < 7+dl || len(b) < 7+dl+int(b[6+dl]) {
			return
		}
		dcid, scid := b[6:6+dl], b[7+dl:7+dl+int(b[6+dl])]
		vn := []byte{0x80 | 0x2a, 0, 0, 0, 0, byte(len(scid))}
		vn = append(vn, scid...)
		vn = append(vn, byte(len(dcid)))
		vn = append(vn, dcid...)
		vn = append(vn, 0x1a, 0x2a, 0x3a, 0x4a, 0xff, 0, 0, 0x1d)
		s.WriteToUDP(vn, from)
	})
	cl := newTestClient(t, "", true, nil)
	var c Conn
	err := newDriver(t, s.LocalAddr().String()).run(cl, &c, 5*time.Second)
	if !errors.Is(err, ErrVersionNegotiation) || ClassOf(err) != ClassVersion {
		t.Fatalf("err %v, want the version negotiation class", err)
	}
}

// A server that never answers: the handshake times out on time.
func TestHandshakeTimeout(t *testing.T) {
	var mu sync.Mutex
	got := 0
	s := udpLoop(t, func(*net.UDPConn, *net.UDPAddr, []byte) { mu.Lock(); got++; mu.Unlock() })
	cl := newTestClient(t, "", true, func(c *Config) {
		c.HandshakeTimeout = 400 * time.Millisecond
		c.InitialRTT = 20 * time.Millisecond
	})
	var c Conn
	start := time.Now()
	err := newDriver(t, s.LocalAddr().String()).run(cl, &c, 5*time.Second)
	el := time.Since(start)
	if !errors.Is(err, ErrHandshakeTimeout) || el < 400*time.Millisecond || el > 2*time.Second {
		t.Fatalf("err %v after %v, want the handshake timeout after 400ms", err, el)
	}
	mu.Lock()
	defer mu.Unlock()
	if got < 3 { // the first Initial and PTO resends at 60, 180ms...
		t.Errorf("the server got %d datagrams, want the Initial resent on each PTO", got)
	}
}

// relay forwards datagrams between one client and srvAddr, dropping
// those of the client for which drop (given their count, from 1) is
// true; it returns its address and a counter of client datagrams.
func relay(t *testing.T, srvAddr string, drop func(n int, b []byte) bool) (string, func() int) {
	sa, _ := net.ResolveUDPAddr("udp4", srvAddr)
	var mu sync.Mutex
	var client *net.UDPAddr
	fromClient := 0
	s := udpLoop(t, func(s *net.UDPConn, from *net.UDPAddr, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if from.String() == sa.String() {
			if client != nil {
				s.WriteToUDP(b, client)
			}
			return
		}
		client = from
		fromClient++
		if !drop(fromClient, b) {
			s.WriteToUDP(b, sa)
		}
	})
	return s.LocalAddr().String(), func() int { mu.Lock(); defer mu.Unlock(); return fromClient }
}

// A relay that drops the client's first datagram: the PTO resends the
// Initial and the connection succeeds.
func TestLostInitial(t *testing.T) {
	body := testutil.Body(2000)
	srv := startServer(t, bodyHandler(body), serverOpts{key: certs.P256})
	addr, count := relay(t, srv.addr, func(n int, _ []byte) bool { return n == 1 })
	cl := newTestClient(t, srv.ca, false, func(c *Config) { c.InitialRTT = 50 * time.Millisecond })
	var c Conn
	start := time.Now()
	err := newDriver(t, addr).run(cl, &c, 5*time.Second)
	el := time.Since(start)
	if err != nil || c.Status() != 200 || c.BodyBytes() != int64(len(body)) {
		t.Fatalf("err %v status %d body %d", err, c.Status(), c.BodyBytes())
	}
	if el < 150*time.Millisecond || el > 2*time.Second {
		t.Errorf("took %v: want one PTO (150ms) and a round trip", el)
	}
	if count() < 2 {
		t.Errorf("%d datagrams from the client", count())
	}
}

// A relay that drops the client's datagram with its Finished (and the
// request coalesced with it): the PTO resends both.
func TestLostFinished(t *testing.T) {
	body := testutil.Body(2000)
	srv := startServer(t, bodyHandler(body), serverOpts{key: certs.P256})
	var dropped atomic.Bool
	addr, _ := relay(t, srv.addr, func(n int, b []byte) bool {
		// A Handshake packet (long header type 2) longer than an ACK.
		if !dropped.Load() && len(b) > 100 && b[0]&0x80 != 0 && b[0]>>4&3 == 2 {
			dropped.Store(true)
			return true
		}
		return false
	})
	cl := newTestClient(t, srv.ca, false, nil)
	var c Conn
	if err := newDriver(t, addr).run(cl, &c, 5*time.Second); err != nil || c.Status() != 200 || c.BodyBytes() != int64(len(body)) {
		t.Fatalf("err %v status %d body %d", err, c.Status(), c.BodyBytes())
	}
	if !dropped.Load() {
		t.Error("no datagram with the Finished seen")
	}
}

// A Retry with a bad integrity tag, injected ahead of the server's
// answer, is ignored: following it would derive the wrong Initial keys.
func TestForgedRetryIgnored(t *testing.T) {
	body := testutil.Body(100)
	srv := startServer(t, bodyHandler(body), serverOpts{})
	srvAddr, _ := net.ResolveUDPAddr("udp4", srv.addr)
	var mu sync.Mutex
	var client *net.UDPAddr
	relay := udpLoop(t, func(s *net.UDPConn, from *net.UDPAddr, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if from.String() == srvAddr.String() {
			s.WriteToUDP(b, client)
			return
		}
		if client == nil {
			dl := int(b[5])
			dcid, scid := b[6:6+dl], b[7+dl:7+dl+int(b[6+dl])]
			r := []byte{0xf0, 0, 0, 0, 1, byte(len(scid))}
			r = append(r, scid...)
			r = append(r, 8, 1, 2, 3, 4, 5, 6, 7, 8)
			r = append(r, "forged-token"...)
			r = append(r, dcid[:min(len(dcid), 16)]...) // not the tag
			r = append(r, make([]byte, 16-min(len(dcid), 16))...)
			s.WriteToUDP(r, from)
		}
		client = from
		s.WriteToUDP(b, srvAddr)
	})
	cl := newTestClient(t, srv.ca, false, func(c *Config) { c.HandshakeTimeout = time.Second })
	var c Conn
	if err := newDriver(t, relay.LocalAddr().String()).run(cl, &c, 5*time.Second); err != nil || c.retried {
		t.Fatalf("err %v retried %v", err, c.retried)
	}
}

// A server that fails the handshake (it requires a client certificate)
// closes the connection: the peer-closed class, with its CRYPTO_ERROR
// code (0x100 + certificate_required, 116).
func TestPeerClosed(t *testing.T) {
	srv := startServer(t, bodyHandler(nil), serverOpts{clientAuth: true})
	cl := newTestClient(t, srv.ca, false, nil)
	var c Conn
	err := newDriver(t, srv.addr).run(cl, &c, 5*time.Second)
	var e *Error
	if !errors.Is(err, ErrPeerClosed) || !errors.As(err, &e) || e.Code != 0x100+116 {
		t.Fatalf("err %v, want the peer-closed class with code 0x174", err)
	}
	if _, done := c.HandshakeDone(); !done {
		t.Error("the client's side of the handshake should have completed")
	}
}

// Statuses other than 200 and an empty body.
func TestStatus(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/body" || r.Method != "GET" || r.Host != "localhost" {
			w.WriteHeader(400)
			return
		}
		w.WriteHeader(418)
	}), serverOpts{})
	cl := newTestClient(t, srv.ca, false, nil)
	var c Conn
	if err := newDriver(t, srv.addr).run(cl, &c, 5*time.Second); err != nil || c.Status() != 418 || c.BodyBytes() != 0 {
		t.Fatalf("err %v status %d body %d", err, c.Status(), c.BodyBytes())
	}
}
