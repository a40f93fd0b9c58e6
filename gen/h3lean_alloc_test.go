package gen

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/run"
	genquic "github.com/loadlab/loadlab/gen/quic"
	"github.com/loadlab/loadlab/internal/testutil"
)

// h3LeanAllocsPerRequest is allocsPerRequest for the lean HTTP/3 loop
// over n responses (after 50 to warm up), counted per response, not per
// pump: one wait can complete several connections (a recvmmsg batch), and
// pump(1) then counts them once. The count is the whole process's, and
// the run's probe (quic-go's handshake) may leave a goroutine that
// allocates once or twice while it winds down: the smallest of up to three
// windows is taken (an allocation on the request path is in all three).
func h3LeanAllocsPerRequest(t *testing.T, cfg Config, n uint64, obs ...Observer) (float64, *run.Hand) {
	cfg.HTTP3 = true
	cfg.TLS.Engine = "lean"
	h := hand(t, cfg, obs...)
	h.LC.D.Begin(h.LC.Now())
	pump(t, h, 50) // handshakes, buffers warm
	least := -1.0
	for range 3 {
		var ok0, ok1 uint64
		perPump := testing.AllocsPerRun(1, func() {
			ok0 = h.LC.Rec.OK
			pump(t, h, n)
			ok1 = h.LC.Rec.OK
		})
		if per := perPump / float64(ok1-ok0); least < 0 || per < least {
			least = per
		}
		if least == 0 {
			break
		}
	}
	return least, h
}

// bareConnAllocs is what one bare connection of the lean loop's client
// configuration (for cfg, as the engine builds it from h's run) allocates,
// run to its end by hand on a socket of its own: the crypto of a
// handshake (gen/quic's TestAllocsPerConnection).
func bareConnAllocs(t *testing.T, h *run.Hand, cfg Config) float64 {
	r := h.Run
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	dst := r.Dst.Addr().As4()
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(r.Dst.Port()), Addr: dst}); err != nil {
		t.Fatal(err)
	}
	tgt := r.Spec.Target
	qc := &genquic.Config{TLS: r.TLS.Lean, Authority: tgt.HostHeader, Path: tgt.Path, Method: "GET",
		HandshakeTimeout: cfg.Timeout, Timeout: cfg.Timeout, KeepAlive: !cfg.NewConn, Header: [][2]string{{"user-agent", "loadlab"}}}
	if err := qc.Prepare(); err != nil {
		t.Fatal(err)
	}
	cl, err := genquic.NewClient(qc)
	if err != nil {
		t.Fatal(err)
	}
	var c genquic.Conn
	out, buf := make([]byte, 0, 1500), make([]byte, 1500)
	one := func() {
		if err := runLeanBlocking(fd, cl, &c, time.Now().Add(5*time.Second), out, buf); err != nil || c.Status() != 200 {
			t.Fatalf("bare connection: %v, status %d", err, c.Status())
		}
	}
	one()
	return testing.AllocsPerRun(50, one)
}

// TestAllocsH3LeanNewConn: a request on a new lean QUIC connection, in
// closed and open loop, allocates what a bare gen/quic connection does
// (the AEAD and header-protection constructors of three levels; with
// verification the signature check) and nothing more: the loop, its
// sockets, its timers and its recording allocate nothing per request.
func TestAllocsH3LeanNewConn(t *testing.T) {
	dir := testutil.CertDir(t)
	addr := startAllocServer(t, "h3", 1024, dir)
	for _, tc := range []struct {
		name string
		tls  TLSOptions
	}{
		{"insecure", TLSOptions{Insecure: true}},
		{"verified", TLSOptions{CAFile: certs.PathsFor(dir, certs.P256).CA}},
	} {
		for _, rate := range []float64{0, 20000} {
			cfg := Config{URL: "https://" + addr + "/", Connections: 4, Rate: rate, NewConn: true, TLS: tc.tls, Timeout: 5 * time.Second}
			const n = 400
			loop, h := h3LeanAllocsPerRequest(t, cfg, n)
			bare := bareConnAllocs(t, h, cfg)
			t.Logf("%s rate %v: %.1f allocations per request, %.1f per bare connection", tc.name, rate, loop, bare)
			// The connections in flight at the window's two ends (at most
			// Connections) make the count per response differ from the
			// count per connection by up to bare*Connections/n.
			if bare == 0 || loop > bare*(1+float64(cfg.Connections)/n) {
				t.Errorf("%s rate %v: %.1f allocations per request (a new connection each), a bare connection %.1f: the loop allocates", tc.name, rate, loop, bare)
			}
		}
	}
}

// TestZeroAllocH3LeanKeepAlive: a keep-alive HTTP/3 request on the lean
// client allocates nothing, in closed and open loop, paced, with
// verification and with an observer (what --metrics-addr adds). With 1 MiB
// bodies (about 750 packets each) the server updates the 1-RTT keys now
// and then (quic-go: every 100,000 packets), and each update makes new
// AEADs: a few allocations per hundred requests, nothing per request.
func TestZeroAllocH3LeanKeepAlive(t *testing.T) {
	dir := testutil.CertDir(t)
	addr := startAllocServer(t, "h3", 1024, dir)
	big := startAllocServer(t, "h3", 1<<20, dir)
	ca := certs.PathsFor(dir, certs.P256).CA
	for _, tc := range []struct {
		name string
		cfg  Config
		n    uint64
		max  float64
		obs  []Observer
	}{
		{"closed", Config{URL: "https://" + addr + "/", Connections: 4, TLS: TLSOptions{CAFile: ca}}, 500, 0, nil},
		{"open", Config{URL: "https://" + addr + "/", Connections: 4, Rate: 20000, TLS: TLSOptions{CAFile: ca}}, 500, 0, nil},
		{"open-paced", Config{URL: "https://" + addr + "/", Connections: 4, Rate: 20000, PacingTolerance: time.Millisecond, TLS: TLSOptions{Insecure: true}}, 500, 0, nil},
		{"live", Config{URL: "https://" + addr + "/", Connections: 4, Rate: 20000, TLS: TLSOptions{Insecure: true}}, 500, 0, []Observer{nopObserver{}}},
		{"1MiB", Config{URL: "https://" + big + "/", Connections: 1, TLS: TLSOptions{Insecure: true}}, 100, 0.1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Timeout = 5 * time.Second
			n, _ := h3LeanAllocsPerRequest(t, tc.cfg, tc.n, tc.obs...)
			t.Logf("%.3f allocations per request", n)
			if n > tc.max {
				t.Fatalf("%v allocations per keep-alive request, want <= %v", n, tc.max)
			}
		})
	}
}

// runLeanBlocking runs Conn c of cl over the connected socket fd until
// its response is complete (then closes it) or it fails, waiting in
// poll(2), until deadline; out and buf are its buffers for a datagram to
// send and one received.
func runLeanBlocking(fd int, cl *genquic.Client, c *genquic.Conn, deadline time.Time, out, buf []byte) error {
	out, err := c.Start(cl, time.Now(), out[:0])
	if err != nil {
		return err
	}
	pfd := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for !c.Closed() && !c.Done() {
		if len(out) > 0 {
			if _, err := rawio.Write(fd, out); err == unix.ECONNREFUSED {
				return err
			}
			out = out[:0]
		}
		now := time.Now()
		if !now.Before(deadline) {
			return errBareTimeout
		}
		at := deadline
		if d := c.Deadline(); !d.IsZero() && d.Before(at) {
			at = d
		}
		ms := int(time.Until(at).Milliseconds()) + 1
		if _, err := unix.Poll(pfd[:], ms); err != nil && err != unix.EINTR {
			return err
		}
		n, err := rawio.Read(fd, buf)
		now = time.Now()
		switch {
		case err == unix.ECONNREFUSED:
			return err
		case err == nil && n > 0:
			out, _ = c.Receive(now, buf[:n], out)
		default:
			if d := c.Deadline(); !d.IsZero() && !now.Before(d) {
				out, _ = c.Timeout(now, out)
			}
		}
	}
	if len(out) > 0 {
		rawio.Write(fd, out) //nolint:errcheck // the last ACK or the CONNECTION_CLOSE: best effort
	}
	if out = c.Close(time.Now(), out[:0]); len(out) > 0 { // kept alive: close it
		rawio.Write(fd, out) //nolint:errcheck // best effort
	}
	return c.Err()
}

// errBareTimeout: a bare connection did not end in time.
var errBareTimeout = errors.New("the bare QUIC connection did not end in time")
