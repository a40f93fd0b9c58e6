package quic

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// sizeHandler answers /N with N bytes of testutil.Body.
func sizeHandler() http.Handler {
	bodies := map[int][]byte{}
	for _, n := range []int{1000, 1 << 20} {
		bodies[n] = testutil.Body(n)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Path[1:])
		b, ok := bodies[n]
		if err != nil || !ok {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b)
	})
}

// quicConfig returns an adjust function that gives the server conf.
func quicConfig(conf *quic.Config) func(*http3.Server) {
	return func(s *http3.Server) { s.QUICConfig = conf }
}

// keepAlive runs n requests on one keep-alive connection and checks that
// each is a 200 with body's bytes, on stream 4i, with one handshake.
func keepAlive(t *testing.T, d *driver, cl *Client, c *Conn, n int, body []byte) {
	t.Helper()
	want := sha256.Sum256(body)
	var sum hash.Hash = sha256.New()
	c.Body = sum
	var hsAt time.Time
	if c.Requests() == 0 {
		c.Tag = uint16(0xa000 + n)
	}
	for i := 0; i < n; i++ {
		sum.Reset()
		var err error
		if i == 0 {
			err = d.first(cl, c, 10*time.Second)
			hsAt, _ = c.HandshakeDone()
		} else {
			if !c.Reusable(time.Now()) {
				t.Fatalf("request %d: the connection is not reusable", i)
			}
			err = d.next(c, 10*time.Second)
		}
		if err != nil {
			t.Fatalf("request %d: %v (class %v)", i, err, ClassOf(err))
		}
		if at, ok := c.HandshakeDone(); !ok || !at.Equal(hsAt) {
			t.Fatalf("request %d: handshake at %v, first at %v", i, at, hsAt)
		}
		if c.Status() != 200 || c.BodyBytes() != int64(len(body)) || [32]byte(sum.Sum(nil)) != want {
			t.Fatalf("request %d: status %d, %d body bytes of %d, digest ok %v", i, c.Status(), c.BodyBytes(), len(body), [32]byte(sum.Sum(nil)) == want)
		}
		if c.reqID != uint64(4*i) || c.Requests() != i+1 || c.Closed() || !c.Done() || d.badTag != 0 || Tag(c.SCID()) != c.Tag {
			t.Fatalf("request %d: stream %d, %d requests, closed %v done %v, %d datagrams with another tag", i, c.reqID, c.Requests(), c.Closed(), c.Done(), d.badTag)
		}
	}
}

// closeConn closes c and sends the CONNECTION_CLOSE.
func (d *driver) closeConn(c *Conn) {
	if out := c.Close(time.Now(), d.out[:0]); len(out) > 0 {
		d.sock.Write(out)
	}
}

// Many requests on one connection against quic-go's server: small
// responses crossing the server's stream limit (MAX_STREAMS followed)
// and its connection receive window (MAX_DATA followed), 1 MiB ones
// crossing the client's own window (MAX_DATA sent), and a server that
// allows one stream at a time (every request queued until MAX_STREAMS).
func TestKeepAlive(t *testing.T) {
	srv := startServer(t, sizeHandler(), serverOpts{adjust: quicConfig(&quic.Config{
		MaxIncomingStreams:             10,
		InitialConnectionReceiveWindow: 1000,
		MaxConnectionReceiveWindow:     2000,
		InitialStreamReceiveWindow:     1000,
	})})
	t.Run("small", func(t *testing.T) {
		cl := newTestClient(t, srv.ca, false, func(c *Config) { c.Path = "/1000"; c.KeepAlive = true })
		d := newDriver(t, srv.addr)
		var c Conn
		keepAlive(t, d, cl, &c, 500, testutil.Body(1000))
		// The server's initial limits: 10 streams, 1000 bytes.
		if c.peerStreams < 500 || c.peerData < c.sentData || c.sentData < 500*uint64(len(cl.cfg.request)) {
			t.Errorf("peer streams %d, peer data %d, sent %d", c.peerStreams, c.peerData, c.sentData)
		}
		if c.keyUpdates < 1 {
			t.Errorf("%d key updates (quic-go updates after 100 packets)", c.keyUpdates)
		}
		d.closeConn(&c)
	})
	t.Run("1MiB", func(t *testing.T) {
		const window = 2 << 20
		cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1048576"; c.KeepAlive = true; c.Window = window })
		d := newDriver(t, srv.addr)
		var c Conn
		keepAlive(t, d, cl, &c, 20, testutil.Body(1<<20))
		// 20 MiB through a 2 MiB window: raised every MiB or so, the
		// credit left between half the window and the window.
		if c.recvData < 20<<20 || c.recvMax < c.recvData+window/2 || c.recvMax > c.recvData+window {
			t.Errorf("MAX_DATA at %d after %d bytes", c.recvMax, c.recvData)
		}
		if c.keyUpdates < 1 {
			t.Errorf("%d key updates", c.keyUpdates)
		}
		d.closeConn(&c)
	})
}

// A server allowing one request stream at a time: each Next waits for
// the MAX_STREAMS that the ACK of the previous response brings.
func TestKeepAliveStreamLimit(t *testing.T) {
	srv := startServer(t, sizeHandler(), serverOpts{adjust: quicConfig(&quic.Config{MaxIncomingStreams: 1})})
	cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1000"; c.KeepAlive = true })
	d := newDriver(t, srv.addr)
	var c Conn
	keepAlive(t, d, cl, &c, 50, testutil.Body(1000))
	if d.queued < 10 {
		t.Errorf("%d of 49 requests queued for the server's stream limit", d.queued)
	}
	d.closeConn(&c)
}

// After the server's GOAWAY (http3.Server.Shutdown) the connection is
// not reusable; closing it lets the shutdown finish.
func TestKeepAliveGoAway(t *testing.T) {
	var h3s *http3.Server
	srv := startServer(t, sizeHandler(), serverOpts{adjust: func(s *http3.Server) { h3s = s }})
	cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1000"; c.KeepAlive = true })
	d := newDriver(t, srv.addr)
	var c Conn
	keepAlive(t, d, cl, &c, 3, testutil.Body(1000))
	if !c.Reusable(time.Now()) {
		t.Fatal("not reusable before the GOAWAY")
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- h3s.Shutdown(ctx)
	}()
	if err := d.pump(&c, func() bool { return !c.Reusable(time.Now()) || c.Closed() }, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if !c.ctlParse.GoAway || c.ctlParse.GoAwayID != 12 || c.Closed() {
		t.Fatalf("GOAWAY %v (stream %d), closed %v (%v)", c.ctlParse.GoAway, c.ctlParse.GoAwayID, c.Closed(), c.Err())
	}
	d.closeConn(&c)
	if !c.Closed() || c.Err() != nil {
		t.Fatalf("closed %v err %v", c.Closed(), c.Err())
	}
	if err := <-done; err != nil {
		t.Errorf("the server's shutdown: %v (the CONNECTION_CLOSE should have ended the connection)", err)
	}
}

// A server with a 300 ms idle timeout: the connection is reusable for
// the idle timeout less the margin, then not; a request after the
// server dropped the connection times out.
func TestKeepAliveIdle(t *testing.T) {
	srv := startServer(t, sizeHandler(), serverOpts{adjust: quicConfig(&quic.Config{MaxIdleTimeout: 300 * time.Millisecond})})
	cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1000"; c.KeepAlive = true; c.Timeout = time.Second })
	d := newDriver(t, srv.addr)
	var c Conn
	keepAlive(t, d, cl, &c, 2, testutil.Body(1000))
	if got := c.IdleTimeout(); got != 300*time.Millisecond {
		t.Fatalf("idle timeout %v, want the server's 300ms", got)
	}
	last := c.lastRecv
	if m := c.idleMargin(); m < 10*time.Millisecond || m > 150*time.Millisecond {
		t.Fatalf("idle margin %v", m)
	}
	if !c.Reusable(last.Add(100 * time.Millisecond)) {
		t.Error("not reusable 100ms after the last packet")
	}
	if c.Reusable(last.Add(300*time.Millisecond - c.idleMargin())) {
		t.Error("reusable at the idle timeout less the margin")
	}
	// Idle for real past the timeout: quic-go drops the connection
	// silently, so a request on it times out.
	d.pump(&c, func() bool { return false }, last.Add(500*time.Millisecond)) // ACKs and timers only
	if c.Reusable(time.Now()) || c.Closed() {
		t.Fatalf("reusable %v closed %v after 500ms idle", c.Reusable(time.Now()), c.Closed())
	}
	if err := d.next(&c, 5*time.Second); ClassOf(err) != ClassTimeout {
		t.Fatalf("a request after the idle timeout: %v, want a timeout", err)
	}
}

// relay2 forwards datagrams between one client and srvAddr, dropping
// the client's for which dropC (given their count from 1) is true and
// the server's for which dropS is; it returns its address and the counts
// of datagrams from each side.
func relay2(t *testing.T, srvAddr string, dropC, dropS func(n int, b []byte) bool) (string, func() (client, server int)) {
	sa, _ := net.ResolveUDPAddr("udp4", srvAddr)
	var mu sync.Mutex
	var client *net.UDPAddr
	fromClient, fromServer := 0, 0
	s := udpLoop(t, func(s *net.UDPConn, from *net.UDPAddr, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if from.Port == sa.Port && from.IP.Equal(sa.IP) {
			fromServer++
			if client != nil && (dropS == nil || !dropS(fromServer, b)) {
				s.WriteToUDP(b, client)
			}
			return
		}
		client = from
		fromClient++
		if dropC == nil || !dropC(fromClient, b) {
			s.WriteToUDP(b, sa)
		}
	})
	return s.LocalAddr().String(), func() (int, int) { mu.Lock(); defer mu.Unlock(); return fromClient, fromServer }
}

// shortHeader reports a datagram that starts with a 1-RTT packet.
func shortHeader(b []byte) bool { return len(b) > 0 && b[0]&0x80 == 0 }

// A request datagram lost mid-connection: the probe timeout sends the
// request again (same stream) and it completes.
func TestKeepAliveLostRequest(t *testing.T) {
	srv := startServer(t, sizeHandler(), serverOpts{})
	var mu sync.Mutex
	requests, dropped := 0, 0
	addr, _ := relay2(t, srv.addr, func(_ int, b []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		// Requests after the first are 1-RTT datagrams longer than an
		// ACK (about 35 bytes here).
		if shortHeader(b) && len(b) > 55 {
			requests++
			if requests == 15 {
				dropped++
				return true
			}
		}
		return false
	}, nil)
	cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1000"; c.KeepAlive = true; c.Timeout = 2 * time.Second })
	d := newDriver(t, addr)
	var c Conn
	keepAlive(t, d, cl, &c, 30, testutil.Body(1000))
	mu.Lock()
	defer mu.Unlock()
	if dropped != 1 {
		t.Fatalf("%d request datagrams dropped", dropped)
	}
	d.closeConn(&c)
}

// Response datagrams lost mid-connection: a small response's, and three
// in a row inside a 1 MiB one; the server sends them again (its loss
// detection runs on the client's ACKs) and each request completes.
func TestKeepAliveLostResponse(t *testing.T) {
	srv := startServer(t, sizeHandler(), serverOpts{})
	for _, tc := range []struct {
		path       string
		n, size    int
		from, upto int // the server's 1-RTT datagrams to drop (counted from 1)
	}{{"/1000", 30, 1000, 20, 20}, {"/1048576", 3, 1 << 20, 1000, 1002}} {
		t.Run(tc.path, func(t *testing.T) {
			var mu sync.Mutex
			big, dropped := 0, 0
			addr, _ := relay2(t, srv.addr, nil, func(_ int, b []byte) bool {
				mu.Lock()
				defer mu.Unlock()
				if shortHeader(b) && len(b) > 1000 { // response data
					big++
					if big >= tc.from && big <= tc.upto {
						dropped++
						return true
					}
				}
				return false
			})
			cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = tc.path; c.KeepAlive = true; c.Timeout = 3 * time.Second })
			d := newDriver(t, addr)
			var c Conn
			keepAlive(t, d, cl, &c, tc.n, testutil.Body(tc.size))
			mu.Lock()
			defer mu.Unlock()
			if dropped != tc.upto-tc.from+1 {
				t.Fatalf("%d response datagrams dropped", dropped)
			}
			d.closeConn(&c)
		})
	}
}

// The ACK policy, counted on the wire: in closed loop a keep-alive
// request costs the client one datagram (the ACK of the previous
// response rides on the next request); during a 1 MiB download the
// client acknowledges about every second packet of the server's.
func TestKeepAliveAckPolicy(t *testing.T) {
	srv := startServer(t, sizeHandler(), serverOpts{})
	t.Run("small", func(t *testing.T) {
		addr, count := relay2(t, srv.addr, nil, nil)
		cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1000"; c.KeepAlive = true })
		d := newDriver(t, addr)
		var c Conn
		keepAlive(t, d, cl, &c, 5, testutil.Body(1000))
		c0, s0 := count()
		const n = 200
		keepAlive2(t, d, &c, n, 1000)
		c1, s1 := count()
		sent, got := c1-c0, s1-s0
		t.Logf("%d requests: %d client datagrams, %d server datagrams", n, sent, got)
		// One per request; a few more if a delayed-ACK timer expired
		// (a scheduling pause of the test longer than 20ms).
		if sent < n || sent > n+n/20 {
			t.Errorf("%d client datagrams for %d requests, want %d to %d", sent, n, n, n+n/20)
		}
		if got < n || got > 3*n {
			t.Errorf("%d server datagrams for %d requests", got, n)
		}
		d.closeConn(&c)
	})
	t.Run("1MiB", func(t *testing.T) {
		addr, count := relay2(t, srv.addr, nil, nil)
		cl := newTestClient(t, srv.ca, true, func(c *Config) { c.Path = "/1048576"; c.KeepAlive = true })
		d := newDriver(t, addr)
		var c Conn
		keepAlive(t, d, cl, &c, 1, testutil.Body(1<<20))
		c0, s0 := count()
		const n = 3
		keepAlive2(t, d, &c, n, 1<<20)
		c1, s1 := count()
		acks, got := c1-c0-n, s1-s0 // the client's datagrams less the requests
		t.Logf("%d MiB: %d server datagrams, %d client ACK datagrams", n, got, acks)
		if got < n*(1<<20)/1500 || acks < got*2/5 || acks > got*3/5 {
			t.Errorf("%d client ACK datagrams for %d server datagrams, want about half", acks, got)
		}
		d.closeConn(&c)
	})
}

// keepAlive2 runs n more requests on c (already started), each a 200
// with size body bytes.
func keepAlive2(t *testing.T, d *driver, c *Conn, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := d.next(c, 10*time.Second); err != nil || c.Status() != 200 || c.BodyBytes() != int64(size) {
			t.Fatalf("request %d: %v status %d body %d", i, err, c.Status(), c.BodyBytes())
		}
	}
}
