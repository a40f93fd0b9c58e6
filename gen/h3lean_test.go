package gen

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/pin"
	"github.com/quic-go/quic-go/http3"
)

// leanH3Config is a short --http3 --new-conn run on the lean QUIC client.
func leanH3Config(s *h3TestServer) Config {
	cfg := h3Config(s)
	cfg.NewConn = true
	cfg.Connections = 2
	cfg.Duration = time.Second
	cfg.TLS.Engine = "lean"
	return cfg
}

// TestH3LeanNewConn: every request is one lean QUIC connection to quic-go's
// server: each ends 200 with its 100 bytes, one handshake each.
func TestH3LeanNewConn(t *testing.T) {
	s := startH3Server(t, fixedBody(100))
	res := runH3Test(t, leanH3Config(s))
	if res.OK == 0 || errorTotal(res) != 0 {
		t.Fatalf("ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
	if res.Requests != res.OK || res.Status["200"] != res.OK || res.BytesRead != res.OK*100 {
		t.Errorf("requests %d ok %d status %v bytes %d", res.Requests, res.OK, res.Status, res.BytesRead)
	}
	if res.Handshakes != res.Requests {
		t.Errorf("handshakes %d != requests %d with --new-conn", res.Handshakes, res.Requests)
	}
	if tl := res.TLS; tl == nil || tl.Version != "TLS 1.3" || tl.ALPN != "h3" || tl.Resumed != 0 || tl.Engine != "lean" || res.QUICVersion != "v1" {
		t.Errorf("tls %+v quic_version %q", res.TLS, res.QUICVersion)
	}
	if h := res.HandshakeUs; h == nil || h.P50 <= 0 || h.P50 > res.Latency.P50 {
		t.Errorf("handshake_us %+v latency %+v", res.HandshakeUs, res.Latency)
	}
}

// TestH3LeanSlowServer: the server answers each request after 100 ms, one
// slot, closed loop: each request takes the handshake plus 100 ms, so at
// most 10 a second, and its latency is at least 100 ms.
func TestH3LeanSlowServer(t *testing.T) {
	s := startH3Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(100 * time.Millisecond)
		w.Write([]byte("ok"))
	}))
	cfg := leanH3Config(s)
	cfg.Connections = 1
	cfg.Duration = 2 * time.Second
	res := runH3Test(t, cfg)
	if errorTotal(res) != 0 {
		t.Fatalf("errors %v %v", res.Errors, res.ErrorSamples)
	}
	if res.OK < 8 || res.OK > 20 {
		t.Errorf("ok %d in 2 s at >= 100 ms each, want 8-20", res.OK)
	}
	if res.Latency.P50 < 100_000 || res.Latency.P50 > 400_000 {
		t.Errorf("p50 %d µs, want 100-400 ms (100 ms of server time and a loopback handshake)", res.Latency.P50)
	}
}

func TestH3LeanWrongCA(t *testing.T) {
	s := startH3Server(t, fixedBody(100))
	cfg := leanH3Config(s)
	cfg.TLS.CAFile = testutil.OtherCA(t)
	res := runH3Test(t, cfg)
	if res.OK != 0 || res.Errors["tls"] == 0 || res.Requests != res.Errors["tls"] {
		t.Fatalf("ok %d requests %d errors %v: want TLS errors only", res.OK, res.Requests, res.Errors)
	}
	if msg := res.ErrorSamples["tls"]; !strings.Contains(msg, "certif") {
		t.Errorf("tls sample %q does not mention the certificate", msg)
	}
}

func TestH3LeanVerify(t *testing.T) {
	s := startH3Server(t, fixedBody(100))
	good := sha256.Sum256(testutil.Body(100))
	for _, tc := range []struct {
		name string
		sum  []byte
		ok   bool
	}{{"match", good[:], true}, {"mismatch", make([]byte, 32), false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := leanH3Config(s)
			cfg.VerifySHA256 = tc.sum
			res := runH3Test(t, cfg)
			if res.Requests == 0 {
				t.Fatal("no requests")
			}
			if tc.ok && (res.OK != res.Requests || errorTotal(res) != 0) {
				t.Errorf("ok %d of %d, errors %v", res.OK, res.Requests, res.Errors)
			}
			if !tc.ok && (res.OK != 0 || res.Errors["body_mismatch"] != res.Requests) {
				t.Errorf("ok %d of %d, errors %v: want body_mismatch for each", res.OK, res.Requests, res.Errors)
			}
		})
	}
}

// TestH3LeanMethods: the lean client sends the run's method, in the QPACK
// static table or not, and the server sees it.
func TestH3LeanMethods(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	s := startH3Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method]++
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	for _, m := range []string{"DELETE", "PURGE", "HEAD"} {
		cfg := leanH3Config(s)
		cfg.Method = m
		cfg.Duration = 300 * time.Millisecond
		res := runH3Test(t, cfg)
		if res.OK == 0 || errorTotal(res) != 0 || res.TLS == nil || res.TLS.Engine != "lean" {
			t.Fatalf("%s: ok %d errors %v %v tls %+v", m, res.OK, res.Errors, res.ErrorSamples, res.TLS)
		}
		mu.Lock()
		n := seen[m]
		mu.Unlock()
		if uint64(n) < res.OK {
			t.Errorf("%s: the server saw %d such requests of %d answered (saw %v)", m, n, res.OK, seen)
		}
	}
}

// TestH3LeanPinning: the lean engine's loop runs on a thread pinned to
// the run's CPU (the server, in this process, is not restricted), the
// account is that CPU's, and the process's affinity is left alone.
func TestH3LeanPinning(t *testing.T) {
	allowed := needCPUs(t, 2, "to tell a restriction from none")
	cpu := allowed[len(allowed)-1]
	s := startH3Server(t, fixedBody(100))
	cfg := h3Config(s)
	cfg.TLS.Engine = "lean"
	cfg.CPUs = pin.CPUSet{cpu}
	cfg.Duration = time.Second
	res := runH3Test(t, cfg)
	if res.OK == 0 || errorTotal(res) != 0 {
		t.Fatalf("ok %d errors %v", res.OK, res.Errors)
	}
	if g := res.Generator; len(g.CPUs) != 1 || g.CPUs[0] != cpu || g.Loops != 1 || len(g.Busy) != 1 || g.Busy[0] <= 0 || g.IO != "udp" {
		t.Errorf("generator %+v", g)
	}
	if now, _ := pin.Allowed(); !now.Equal(allowed) {
		t.Errorf("affinity after the run %s, want %s", now, allowed)
	}
}

// TestH3LeanVerdictStarved: as TestVerdictStarved, against quic-go in the
// child process: the loop, decrypting and hashing every body, waits to run
// about two thirds of the time. Its ACKs wait with it and the server's
// congestion control slows down, so the loop may also idle: the self-check
// must still blame the generator, naming starvation (a QUIC loop's own
// rule).
func TestH3LeanVerdictStarved(t *testing.T) {
	res := runStarved(t, "h3", func(addr string, sum []byte) Config {
		return Config{URL: "https://" + addr + "/", HTTP3: true, Connections: 8, VerifySHA256: sum, TLS: TLSOptions{Insecure: true, Engine: "lean"}}
	})
	if g := res.Generator; g.Starved[0] < 0.3 {
		t.Errorf("starved %.2f: a loop sharing its CPU with two spinners waits to run for much of it (0.39-0.70 measured)", g.Starved[0])
	}
}

// TestH3LeanRetriesRejected: the server refuses every 10th request
// unprocessed (RESET_STREAM H3_REQUEST_REJECTED, as a server going away
// does for streams above its GOAWAY): each is sent once more on a new
// connection and answered, counted in retries, not as an error; on both
// paths.
func TestH3LeanRetriesRejected(t *testing.T) {
	h3Modes(t, func(t *testing.T, newConn bool) {
		var n, rejected atomic.Int64
		s := startH3Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%10 == 0 {
				if str, err := w.(http3.HTTPStreamer).HTTPStream(); err == nil {
					rejected.Add(1)
					str.CancelRead(0x10b)
					str.CancelWrite(0x10b)
					return
				}
			}
			w.Write([]byte("ok"))
		}))
		cfg := leanH3Config(s)
		cfg.NewConn = newConn
		cfg.Rate = 200
		cfg.Duration = time.Second
		res := runH3Test(t, cfg)
		if errorTotal(res) != 0 || res.OK != res.Requests || res.Requests < 150 {
			t.Fatalf("requests %d ok %d errors %v %v: want every request answered", res.Requests, res.OK, res.Errors, res.ErrorSamples)
		}
		if r := int64(res.Retries); r < int64(res.Requests)/12 || r > rejected.Load() {
			t.Errorf("retries %d, the server rejected %d of %d requests", r, rejected.Load(), n.Load())
		}
	})
}
