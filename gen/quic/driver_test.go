package quic

import (
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"hash"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen/tls13"
	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/quic-go/quic-go/http3"
)

// maxSteps bounds the datagrams and timeouts one connection may take in
// a test.
const maxSteps = 20000

// driver runs Conns to completion over one UDP socket, blocking: the
// test's event loop.
type driver struct {
	sock *net.UDPConn
	buf  []byte
	out  []byte
	sm   time.Duration // time spent inside the Conn's methods
	// sent counts the datagrams written; queued the requests Next had to
	// queue.
	sent, queued int
	// badTag counts datagrams for the Conn whose TagOf is not its Tag.
	badTag int
}

// trace: QUIC_TRACE is set (packet traces on stderr).
var trace = os.Getenv("QUIC_TRACE") != ""

func newDriver(t testing.TB, addr string) *driver {
	t.Helper()
	if trace {
		debugf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	}
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	sock, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sock.Close() })
	return &driver{sock: sock, buf: make([]byte, 64<<10), out: make([]byte, 0, 2048)}
}

// run starts c and feeds it until it closes or limit passes.
func (d *driver) run(cl *Client, c *Conn, limit time.Duration) error {
	var err error
	t0 := time.Now()
	d.out, err = c.Start(cl, t0, d.out[:0])
	d.sm += time.Since(t0)
	if err != nil {
		return err
	}
	if err := d.pump(c, c.Closed, time.Now().Add(limit)); err != nil {
		return err
	}
	if !c.Closed() {
		return errors.New("connection not closed after the step limit")
	}
	return c.Err()
}

// first starts a keep-alive c and feeds it until its first response is
// complete (or it closes, or limit passes).
func (d *driver) first(cl *Client, c *Conn, limit time.Duration) error {
	var err error
	t0 := time.Now()
	d.out, err = c.Start(cl, t0, d.out[:0])
	d.sm += time.Since(t0)
	if err != nil {
		return err
	}
	return d.untilDone(c, limit)
}

// next sends c's next request and feeds it until the response is
// complete (or it closes, or limit passes).
func (d *driver) next(c *Conn, limit time.Duration) error {
	var err error
	t0 := time.Now()
	d.out, err = c.Next(t0, d.out[:0])
	d.sm += time.Since(t0)
	if err != nil {
		return err
	}
	if c.reqQueued {
		d.queued++
	}
	return d.untilDone(c, limit)
}

func (d *driver) untilDone(c *Conn, limit time.Duration) error {
	if err := d.pump(c, func() bool { return c.Done() || c.Closed() }, time.Now().Add(limit)); err != nil {
		return err
	}
	if c.Err() != nil {
		return c.Err()
	}
	if !c.Done() {
		return errors.New("response not complete after the step limit")
	}
	return nil
}

// pump sends d.out and feeds c the datagrams and timeouts that follow
// until stop reports true; what c has to send then is sent too.
func (d *driver) pump(c *Conn, stop func() bool, hard time.Time) error {
	var err error
	for step := 0; step < maxSteps && !stop(); step++ {
		if len(d.out) > 0 {
			if _, werr := d.sock.Write(d.out); werr != nil {
				return werr
			}
			d.sent++
		}
		dl := c.Deadline()
		if dl.IsZero() || dl.After(hard) {
			dl = hard
		}
		d.sock.SetReadDeadline(dl)
		n, rerr := d.sock.Read(d.buf)
		now := time.Now()
		if rerr != nil {
			var ne net.Error
			if !errors.As(rerr, &ne) || !ne.Timeout() {
				continue // e.g. ICMP port unreachable: keep waiting, as QUIC does
			}
			if now.After(hard) {
				return fmt.Errorf("test limit passed")
			}
			d.out, err = c.Timeout(now, d.out[:0])
			d.sm += time.Since(now)
			if trace {
				fmt.Fprintf(os.Stderr, "timeout -> send %d err %v ack ranges %v\n", len(d.out), err, c.lv[lvlApp].acks.ranges[:c.lv[lvlApp].acks.n])
			}
			continue
		}
		// The test's socket serves one Conn at a time; a demultiplexer
		// would look the Conn up by TagOf and check DestConnID.
		if id := DestConnID(d.buf[:n]); id == nil || string(id) != string(c.SCID()) {
			d.out = d.out[:0]
			continue
		}
		if tag, ok := TagOf(d.buf[:n]); !ok || tag != c.Tag {
			d.badTag++
		}
		d.out, err = c.Receive(now, d.buf[:n], d.out[:0])
		d.sm += time.Since(now)
		if trace {
			_, done := c.HandshakeDone()
			fmt.Fprintf(os.Stderr, "recv %d -> send %d err %v done %v status %d body %d closed %v deadline %v pending %d\n", n, len(d.out), err, done, c.Status(), c.BodyBytes(), c.Closed(), c.Deadline().Sub(now), c.lv[lvlApp].acks.pending)
		}
	}
	if len(d.out) > 0 {
		d.sock.Write(d.out) // e.g. the CONNECTION_CLOSE
		d.sent++
		d.out = d.out[:0]
	}
	return nil
}

// h3Server is a quic-go HTTP/3 server on 127.0.0.1.
type h3Server struct {
	addr string
	ca   string
}

type serverOpts struct {
	key   certs.KeyType
	retry bool
	curve []tls.CurveID
	// clientAuth makes the server require a client certificate (which
	// this client never has: the handshake fails on the server's side).
	clientAuth bool
	// adjust changes the http3.Server before it serves (its QUICConfig).
	adjust func(*http3.Server)
}

func startServer(t testing.TB, h http.Handler, o serverOpts) *h3Server {
	t.Helper()
	s := testutil.StartH3Server(t, h, testutil.H3Options{Key: o.key, Curves: o.curve, Retry: o.retry, ClientAuth: o.clientAuth, Adjust: o.adjust})
	return &h3Server{addr: s.Addr, ca: s.CA}
}

func bodyHandler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
	})
}

// newTestClient is a Client for srv: verifying against its CA unless
// insecure.
func newTestClient(t testing.TB, srvCA string, insecure bool, adjust func(*Config)) *Client {
	t.Helper()
	tc := &tls13.Config{ServerName: "localhost"}
	if !insecure {
		pool, err := certs.LoadCertPool(srvCA)
		if err != nil {
			t.Fatal(err)
		}
		tc.Verifier = tls13.NewVerifier(pool, "localhost", 0)
	}
	cfg := &Config{TLS: tc, Path: "/body", HandshakeTimeout: 3 * time.Second, Timeout: 10 * time.Second}
	if adjust != nil {
		adjust(cfg)
	}
	if err := cfg.Prepare(); err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// getN runs n sequential connections and checks each response.
func getN(t *testing.T, d *driver, cl *Client, n int, body []byte) {
	t.Helper()
	want := sha256.Sum256(body)
	var c Conn
	var sum hash.Hash = sha256.New()
	c.Body = sum
	for i := 0; i < n; i++ {
		sum.Reset()
		if err := d.run(cl, &c, 10*time.Second); err != nil {
			t.Fatalf("connection %d: %v (class %v)", i, err, ClassOf(err))
		}
		if _, ok := c.HandshakeDone(); !ok || c.Status() != 200 || c.BodyBytes() != int64(len(body)) || [32]byte(sum.Sum(nil)) != want {
			t.Fatalf("connection %d: status %d, %d body bytes of %d, digest ok %v", i, c.Status(), c.BodyBytes(), len(body), [32]byte(sum.Sum(nil)) == want)
		}
	}
}
