package gen

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// The allocation tests drive one loop by hand, on the test goroutine,
// against a keep-alive server in a child process: testing.AllocsPerRun
// counts the allocations of the whole process, so the server must not live
// in it.

const allocServerEnv = "LOADLAB_ALLOC_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(spinEnv) != "" {
		spinner()
		return
	}
	if mode := os.Getenv(allocServerEnv); mode != "" {
		allocServer(mode, os.Getenv("LOADLAB_ALLOC_BODY"))
		return
	}
	// LOADLAB_TEST_IO=epoll|uring|auto: the I/O path of every run whose
	// Config.IO is unset (make test runs the measurement tests under each).
	if io := os.Getenv("LOADLAB_TEST_IO"); io != "" {
		defaultIO = io
	}
	// LOADLAB_TEST_H3ENGINE=std: the HTTP/3 tests' runs on quic-go's
	// engine (h3Config); unset, on whichever engine auto picks (the lean
	// client where it applies). make test runs the measurement tests
	// under both.
	testH3Engine = os.Getenv("LOADLAB_TEST_H3ENGINE")
	os.Exit(m.Run())
}

// allocServer answers every request on every connection with a fixed
// response until stdin closes. It prints its port first.
func allocServer(mode, bodySize string) {
	if c := os.Getenv("LOADLAB_ALLOC_CPUS"); c != "" {
		cpus, err := pin.ParseList(c)
		if err == nil {
			err = pin.RestrictProcess(cpus)
		}
		if err != nil {
			fmt.Println("ERR", err)
			return
		}
	}
	size, _ := strconv.Atoi(bodySize)
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", size, strings.Repeat("x", size)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	if mode == "h2" || mode == "h2tls" {
		allocServerH2(ln, mode == "h2tls", size)
		return
	}
	if mode == "h3" {
		ln.Close()
		allocServerH3(size)
		return
	}
	if mode == "tls" {
		p := certs.PathsFor(os.Getenv("LOADLAB_ALLOC_CERTS"), certs.P256)
		kp, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
		if err != nil {
			fmt.Println("ERR", err)
			return
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{kp}})
	}
	fmt.Println(ln.Addr().(interface{ String() string }).String())
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func(c net.Conn) {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				// requests end with an empty line and carry no body
				for {
					line, err := r.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) <= 2 {
						break
					}
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}(c)
	}
}

// allocServerH2 is allocServer's HTTP/2 server: x/net's, h2c with prior
// knowledge or ALPN h2 over TLS, a body of size bytes for every request.
func allocServerH2(ln net.Listener, useTLS bool, size int) {
	if useTLS {
		p := certs.PathsFor(os.Getenv("LOADLAB_ALLOC_CERTS"), certs.P256)
		kp, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
		if err != nil {
			fmt.Println("ERR", err)
			return
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{kp}, NextProtos: []string{http2.NextProtoTLS}})
	}
	body := []byte(strings.Repeat("x", size))
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(body)
	})
	srv := &http2.Server{}
	fmt.Println(ln.Addr().String())
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			if tc, ok := c.(*tls.Conn); ok && tc.Handshake() != nil {
				return
			}
			srv.ServeConn(c, &http2.ServeConnOpts{Handler: h})
		}()
	}
}

// allocServerH3 is allocServer's HTTP/3 server: quic-go's, a body of size
// bytes for every request, P-256 from LOADLAB_ALLOC_CERTS.
func allocServerH3(size int) {
	p := certs.PathsFor(os.Getenv("LOADLAB_ALLOC_CERTS"), certs.P256)
	kp, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	body := []byte(strings.Repeat("x", size))
	srv := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{kp}}),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(size))
			w.Write(body)
		})}
	fmt.Println(udp.LocalAddr().String())
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	srv.Serve(udp)
}

func startAllocServer(t testing.TB, mode string, body int, certDir string) string {
	return startAllocServerOn(t, mode, body, certDir, nil)
}

// startAllocServerOn is startAllocServer with the server process confined
// to cpus (nil: anywhere).
func startAllocServerOn(t testing.TB, mode string, body int, certDir string, cpus pin.CPUSet) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), allocServerEnv+"="+mode, "LOADLAB_ALLOC_BODY="+strconv.Itoa(body), "LOADLAB_ALLOC_CERTS="+certDir)
	if cpus != nil {
		cmd.Env = append(cmd.Env, "LOADLAB_ALLOC_CPUS="+cpus.String())
	}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "ERR") {
		t.Fatalf("alloc server: %q %v", line, err)
	}
	return strings.TrimSpace(line)
}

// hand builds, by hand and without starting anything, a run for cfg, its
// engine and one loop, and sets the loop up on the calling goroutine's
// thread, its clock past the warmup with an hour to go: the test drives it
// (run.Hand).
func hand(tb testing.TB, cfg Config, obs ...Observer) *run.Hand {
	tb.Helper()
	cfg.Defaults()
	p, err := cfg.Prepare()
	if err != nil {
		tb.Fatal(err)
	}
	h, err := run.NewHand(p.spec, engineOf(p.spec), runObservers(obs))
	if err != nil {
		tb.Fatal(err)
	}
	allowed, err := pin.Allowed()
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.SetUp(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		h.Close()
		pin.PinThreadSet(allowed) // the thread goes back to the scheduler: not pinned to one CPU
		runtime.UnlockOSThread()
	})
	return h
}

// pump runs h's loop until n more responses have completed.
func pump(tb testing.TB, h *run.Hand, n uint64) {
	if err := h.Pump(n); err != nil {
		tb.Fatal(err)
	}
}

// allocsPerRequest counts the allocations of one request of a loop for
// cfg, every connection busy in closed loop, or the open loop's schedule.
func allocsPerRequest(t *testing.T, cfg Config, obs ...Observer) float64 {
	h := hand(t, cfg, obs...)
	h.LC.D.Begin(h.LC.Now())
	pump(t, h, 50) // connect, handshake, warm buffers
	return testing.AllocsPerRun(200, func() { pump(t, h, 1) })
}

func TestZeroAllocClosedLoop(t *testing.T) {
	addr := startAllocServer(t, "plain", 1024, "")
	if n := allocsPerRequest(t, Config{URL: "http://" + addr + "/", Connections: 1}); n != 0 {
		t.Fatalf("closed loop: %v allocations per request, want 0", n)
	}
}

func TestZeroAllocOpenLoop(t *testing.T) {
	addr := startAllocServer(t, "plain", 1024, "")
	if n := allocsPerRequest(t, Config{URL: "http://" + addr + "/", Connections: 4, Rate: 20000}); n != 0 {
		t.Fatalf("open loop: %v allocations per request, want 0", n)
	}
}

// TestZeroAllocOpenLoopPaced: the batched pacing path (quiet sleeps,
// recvmsg with receive timestamps) allocates nothing either, plain and TLS.
func TestZeroAllocOpenLoopPaced(t *testing.T) {
	addr := startAllocServer(t, "plain", 1024, "")
	if n := allocsPerRequest(t, Config{URL: "http://" + addr + "/", Connections: 4, Rate: 20000, PacingTolerance: time.Millisecond}); n != 0 {
		t.Fatalf("paced open loop: %v allocations per request, want 0", n)
	}
	dir := testutil.CertDir(t)
	taddr := startAllocServer(t, "tls", 1024, dir)
	cfg := Config{URL: "https://" + taddr + "/", Connections: 4, Rate: 20000, PacingTolerance: time.Millisecond,
		TLS: TLSOptions{CAFile: certs.PathsFor(dir, certs.P256).CA}}
	if n := allocsPerRequest(t, cfg); n != 0 {
		t.Fatalf("paced open loop over TLS: %v allocations per request, want 0", n)
	}
}

// TestZeroAllocTargets: with several targets (each with its own headers,
// weighted or round-robin) and with a staged rate, a request still
// allocates nothing: each target's request is serialized once, and the
// stages' intended times are computed in place.
func TestZeroAllocTargets(t *testing.T) {
	addr := startAllocServer(t, "plain", 1024, "")
	u := "http://" + addr
	targets := []Request{{Method: "GET", URL: u + "/a", Headers: []string{"Host: a.example"}},
		{Method: "GET", URL: u + "/b?x=1", Headers: []string{"Host: b.example", "X-B: 1"}},
		{Method: "GET", URL: u + "/c"}}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"closed loop", Config{Targets: targets, Connections: 2}},
		{"open loop, weighted", Config{Targets: targets, TargetWeights: []int{3, 2, 1}, Connections: 4, Rate: 20000}},
		{"staged", Config{URL: u + "/", Connections: 4, Stages: []Stage{{0, 20000}, {time.Hour, 20000}}}},
		{"staged targets", Config{Targets: targets, Connections: 4, Stages: []Stage{{time.Second, 20000}, {time.Hour, 20000}}}},
	} {
		if n := allocsPerRequest(t, tc.cfg); n != 0 {
			t.Errorf("%s: %v allocations per request, want 0", tc.name, n)
		}
	}
}

func TestZeroAllocLargeBody(t *testing.T) {
	addr := startAllocServer(t, "plain", 1<<20, "")
	if n := allocsPerRequest(t, Config{URL: "http://" + addr + "/", Connections: 1}); n != 0 {
		t.Fatalf("1 MiB body: %v allocations per request, want 0", n)
	}
}

func TestZeroAllocTLSKeepAlive(t *testing.T) {
	dir := testutil.CertDir(t)
	addr := startAllocServer(t, "tls", 1024, dir)
	cfg := Config{URL: "https://" + addr + "/", Connections: 1, TLS: TLSOptions{CAFile: certs.PathsFor(dir, certs.P256).CA}}
	if n := allocsPerRequest(t, cfg); n != 0 {
		t.Fatalf("TLS keep-alive: %v allocations per request after the handshake, want 0", n)
	}
}

// TestZeroAllocLive: with an observer (what --metrics-addr adds), a
// request also records into the live histograms, and still allocates
// nothing; the live report is made once a second, off the request path.
func TestZeroAllocLive(t *testing.T) {
	var live nopObserver
	dir := testutil.CertDir(t)
	ca := certs.PathsFor(dir, certs.P256).CA
	plain := startAllocServer(t, "plain", 1024, "")
	tls := startAllocServer(t, "tls", 1024, dir)
	h2c := startAllocServer(t, "h2", 1024, "")
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"closed", Config{URL: "http://" + plain + "/", Connections: 1}},
		{"open", Config{URL: "http://" + plain + "/", Connections: 4, Rate: 20000}},
		{"open-paced", Config{URL: "http://" + plain + "/", Connections: 4, Rate: 20000, PacingTolerance: time.Millisecond}},
		{"tls-paced", Config{URL: "https://" + tls + "/", Connections: 4, Rate: 20000, PacingTolerance: time.Millisecond, TLS: TLSOptions{CAFile: ca}}},
		{"h2-open", Config{URL: "http://" + h2c + "/", Connections: 2, Streams: 10, Rate: 20000, HTTP2: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n float64
			if tc.cfg.HTTP2 {
				n = h2AllocsPerRequest(t, tc.cfg, live)
			} else {
				n = allocsPerRequest(t, tc.cfg, live)
			}
			if n != 0 {
				t.Fatalf("with Live: %v allocations per request, want 0", n)
			}
		})
	}
}

// nopObserver observes a run and does nothing with it.
type nopObserver struct{}

func (nopObserver) Second(*result.Live) {}
func (nopObserver) End(*result.Live)    {}

func BenchmarkRequestKeepAlive(b *testing.B) {
	addr := startAllocServer(b, "plain", 1024, "")
	benchKeepAlive(b, Config{URL: "http://" + addr + "/", Connections: 1})
}

func benchKeepAlive(b *testing.B, cfg Config) {
	h := hand(b, cfg)
	h.LC.D.Begin(h.LC.Now())
	pump(b, h, 10)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		pump(b, h, 1)
	}
}

// h2AllocsPerRequest is allocsPerRequest for HTTP/2: every stream of every
// connection busy in closed loop, or the open loop's schedule.
func h2AllocsPerRequest(t *testing.T, cfg Config, obs ...Observer) float64 {
	cfg.HTTP2 = true
	h := hand(t, cfg, obs...)
	h.LC.D.Begin(h.LC.Now())
	pump(t, h, 200) // connect, handshake, SETTINGS, every stream in use, buffers warm
	return testing.AllocsPerRun(500, func() { pump(t, h, 1) })
}

func TestZeroAllocH2(t *testing.T) {
	dir := testutil.CertDir(t)
	ca := certs.PathsFor(dir, certs.P256).CA
	h2c := startAllocServer(t, "h2", 1024, "")
	h2tls := startAllocServer(t, "h2tls", 1024, dir)
	big := startAllocServer(t, "h2", 1<<20, "")
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"closed", Config{URL: "http://" + h2c + "/", Connections: 2, Streams: 10}},
		{"open", Config{URL: "http://" + h2c + "/", Connections: 2, Streams: 10, Rate: 20000}},
		{"open-paced", Config{URL: "http://" + h2c + "/", Connections: 2, Streams: 10, Rate: 20000, PacingTolerance: time.Millisecond}},
		{"tls-paced", Config{URL: "https://" + h2tls + "/", Connections: 2, Streams: 10, Rate: 20000, PacingTolerance: time.Millisecond, TLS: TLSOptions{CAFile: ca}}},
		{"tls", Config{URL: "https://" + h2tls + "/", Connections: 2, Streams: 10, TLS: TLSOptions{CAFile: ca}}},
		{"1MiB", Config{URL: "http://" + big + "/", Connections: 1, Streams: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := h2AllocsPerRequest(t, tc.cfg); n != 0 {
				t.Fatalf("%v allocations per request, want 0", n)
			}
		})
	}
}

func BenchmarkRequestH2(b *testing.B) {
	addr := startAllocServer(b, "h2", 1024, "")
	h := hand(b, Config{URL: "http://" + addr + "/", Connections: 1, Streams: 10, HTTP2: true})
	h.LC.D.Begin(h.LC.Now())
	pump(b, h, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		pump(b, h, 1)
	}
}
