package gen

import (
	"crypto/sha256"
	"crypto/tls"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/testutil"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/pin"
	"golang.org/x/net/http2"
)

// probeConns is the connection every run makes before it starts, to check
// that the target listens (tcpEngine.probe): servers count it.
const probeConns = 1

func runH2Test(t *testing.T, cfg Config) *result.Result {
	t.Helper()
	res := runLogged(t, cfg)
	if res.Protocol != "h2" || res.Streams != cfg.Streams && cfg.Streams != 0 {
		t.Errorf("protocol %q streams %d", res.Protocol, res.Streams)
	}
	if res.H2 == nil {
		t.Fatal("no h2 section")
	}
	return res
}

// gate holds the first n requests until n have arrived: a client that
// runs fewer at once stalls there, and fails the test.
func gate(t *testing.T, n int64, h http.Handler) http.Handler {
	var arrived atomic.Int64
	open := make(chan struct{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := arrived.Add(1); a <= n {
			if a == n {
				close(open)
			}
			select {
			case <-open:
			case <-time.After(5 * time.Second):
				t.Errorf("request %d waited 5 s: only %d requests arrived at once, want %d", a, arrived.Load(), n)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Closed loop, 4 connections x 10 streams, over h2c and TLS (both
// handshake engines): the server sees 40 requests at once and never more;
// every request the result counts reached it and was answered.
func TestH2ClosedLoop(t *testing.T) {
	for _, tc := range []struct {
		name, engine string
		tls          bool
	}{{"h2c", "", false}, {"tls-lean", "lean", true}, {"tls-std", "std", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := testutil.StartH2Server(t, gate(t, 40, fixedBody(1024)), testutil.H2Options{TLS: tc.tls})
			cfg := h2Config(s, "/1k")
			cfg.Streams = 10
			cfg.TLS.Engine = tc.engine
			res := runH2Test(t, cfg)
			if res.OK == 0 || res.ErrorCount() != 0 || res.Requests != res.OK || res.Status["200"] != res.OK {
				t.Fatalf("requests %d ok %d status %v errors %v %v", res.Requests, res.OK, res.Status, res.Errors, res.ErrorSamples)
			}
			if got := s.Requests.Load(); got != int64(res.OK) {
				t.Errorf("server handled %d requests, the result counts %d", got, res.OK)
			}
			if p := s.Peak.Load(); p != 40 {
				t.Errorf("server saw at most %d requests at once, want 40 (4 connections x 10 streams)", p)
			}
			if res.BytesRead != res.OK*1024 {
				t.Errorf("bytes_read %d, want %d (the 1 KiB bodies)", res.BytesRead, res.OK*1024)
			}
			if n := s.Conns.Load() - probeConns; n != 4 || res.H2.GoAways != 0 || res.H2.Refused != 0 {
				t.Errorf("%d connections, goaways %d refused %d: want 4 kept alive", n, res.H2.GoAways, res.H2.Refused)
			}
			if tc.tls {
				if tl := res.TLS; tl == nil || tl.ALPN != "h2" || res.Handshakes != 4 {
					t.Errorf("tls %+v, %d handshakes: want ALPN h2, one handshake per connection", res.TLS, res.Handshakes)
				} else if want := map[string]string{"lean": "lean", "std": "crypto/tls"}[tc.engine]; tl.Engine != want {
					t.Errorf("tls engine %q, want %q", tl.Engine, want)
				}
			}
		})
	}
}

// Open loop at 400 requests/s for 1.5 s: every request of the schedule
// is sent once and answered.
func TestH2OpenLoop(t *testing.T) {
	s := testutil.StartH2Server(t, fixedBody(100), testutil.H2Options{})
	cfg := h2Config(s, "/")
	cfg.Rate = 400
	res := runH2Test(t, cfg)
	checkOpenAccounting(t, res, cfg)
	if res.Mode != "open" || res.OK != 600 || res.ErrorCount() != 0 || s.Requests.Load() != 600 {
		t.Fatalf("mode %s ok %d errors %v, server handled %d: want the 600 of the schedule", res.Mode, res.OK, res.Errors, s.Requests.Load())
	}
	if testutil.Race {
		return
	}
	if res.AchievedRate < 360 || res.AchievedRate > 440 {
		t.Errorf("achieved %.1f/s of 400", res.AchievedRate)
	}
}

// The server allows 3 streams per connection, below the run's 10: two
// connections carry 6 requests at once, never more, and the result says
// why.
func TestH2ServerMaxStreamsLower(t *testing.T) {
	s := testutil.StartH2Server(t, gate(t, 6, fixedBody(1024)), testutil.H2Options{MaxStreams: 3})
	cfg := h2Config(s, "/1k")
	cfg.Connections = 2
	res := runH2Test(t, cfg)
	if res.OK == 0 || res.ErrorCount() != 0 || res.H2.Refused != 0 {
		t.Fatalf("ok %d errors %v refused %d", res.OK, res.Errors, res.H2.Refused)
	}
	if p := s.Peak.Load(); p != 6 {
		t.Errorf("server saw at most %d requests at once, want 6 (2 connections x its limit of 3)", p)
	}
	if res.Streams != DefaultStreams || res.H2.ServerMaxStreams != 3 {
		t.Errorf("streams %d, server_max_streams %d: want the default 10 and the server's 3", res.Streams, res.H2.ServerMaxStreams)
	}
	if !strings.Contains(strings.Join(res.Generator.Notes, "\n"), "limited concurrent streams") {
		t.Errorf("no note about the server's limit: %q", res.Generator.Notes)
	}
}

// Each connection is shut down gracefully after 50 requests (x/net's
// GOAWAY, as nginx's keepalive_requests): the run reconnects, counts one
// GOAWAY per connection that reached 50, and loses no request.
func TestH2GoAwayMidRun(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(map[bool]string{false: "closed", true: "open"}[open], func(t *testing.T) {
			s := testutil.StartH2Server(t, fixedBody(1024), testutil.H2Options{GoAwayAfter: 50})
			cfg := h2Config(s, "/1k")
			cfg.Connections = 2
			if open {
				cfg.Rate = 400
			}
			res := runH2Test(t, cfg)
			if res.OK == 0 || res.ErrorCount() != 0 || res.Requests != res.OK {
				t.Fatalf("requests %d ok %d errors %v %v", res.Requests, res.OK, res.Errors, res.ErrorSamples)
			}
			if got := s.Requests.Load(); got != int64(res.OK) {
				t.Errorf("server handled %d requests, the result counts %d answered: a request went out twice or was lost", got, res.OK)
			}
			conns := s.Conns.Load() - probeConns
			if g := int64(res.H2.GoAways); g < conns-2 || g > conns || g < 2 {
				t.Errorf("goaways %d over %d connections: want one per connection but the last of each slot", g, conns)
			}
			if res.H2.GoAwayCodes["NO_ERROR"] != res.H2.GoAways {
				t.Errorf("goaway codes %v", res.H2.GoAwayCodes)
			}
			if open {
				checkOpenAccounting(t, res, cfg)
			}
		})
	}
}

// A request refused by REFUSED_STREAM goes back to the pending queue with
// its intended time and is sent again: none is lost or counted twice, the
// refusals are counted, and the latency of a request that was refused
// after 50 ms counts those 50 ms.
func TestH2RefusedStream(t *testing.T) {
	const every = 10
	s := startRawH2(t, func(n, _ int64) rawAction {
		if n%every == 0 {
			return rawAction{kind: "refuse", delay: 50 * time.Millisecond}
		}
		return rawAction{kind: "answer"}
	})
	cfg := Config{URL: s.url, HTTP2: true, Connections: 2, Rate: 400, Duration: 1500 * time.Millisecond, Timeout: 2 * time.Second}
	res := runH2Test(t, cfg)
	checkOpenAccounting(t, res, cfg)
	if res.OK != 600 || res.ErrorCount() != 0 {
		t.Fatalf("ok %d errors %v %v: want the 600 of the schedule answered", res.OK, res.Errors, res.ErrorSamples)
	}
	if a, r := s.answered.Load(), s.refused.Load(); a != 600 || uint64(r) != res.H2.Refused || r < 50 {
		t.Errorf("server answered %d and refused %d; the result counts %d refused", a, r, res.H2.Refused)
	}
	// Each refusal adds its 50 ms to its request's latency from the
	// intended time; the others take a few ms at most. A request can be
	// refused more than once (its resend may land on another tenth
	// stream), so count a request refused k times k times: it took
	// >= k x 50 ms. Two-sided: the sum is the count of refusals, within
	// the 1% the run's noise may add.
	var slow uint64
	for k := int64(1); k < 20; k++ {
		slow += uint64(res.CorrectedHist.TotalCount() - countBelow(res.CorrectedHist, k*50_000-5_000))
	}
	if r := res.H2.Refused; slow < r || slow > r+6 {
		t.Errorf("requests took %d x 50 ms from their intended time in all (a request refused twice counts twice), want the %d refusals", slow, r)
	}
}

// RST_STREAM with an error code fails that request as stream_reset, with
// the code counted and in the sample; the connection lives on.
func TestH2StreamReset(t *testing.T) {
	s := startRawH2(t, func(n, _ int64) rawAction {
		if n%4 == 0 {
			return rawAction{kind: "reset", code: http2.ErrCodeInternal}
		}
		return rawAction{kind: "answer"}
	})
	cfg := Config{URL: s.url, HTTP2: true, Connections: 2, Duration: time.Second, Timeout: 2 * time.Second}
	res := runH2Test(t, cfg)
	r := res.Errors["stream_reset"]
	if r == 0 || int64(r) != s.resets.Load() || res.OK != uint64(s.answered.Load()) || res.Requests != res.OK+r || res.ErrorCount() != r {
		t.Fatalf("requests %d ok %d errors %v; server answered %d reset %d", res.Requests, res.OK, res.Errors, s.answered.Load(), s.resets.Load())
	}
	if res.H2.ResetCodes["INTERNAL_ERROR"] != r || !strings.Contains(res.ErrorSamples["stream_reset"], "RST_STREAM INTERNAL_ERROR") {
		t.Errorf("reset codes %v, sample %q", res.H2.ResetCodes, res.ErrorSamples["stream_reset"])
	}
	if n := s.conns.Load() - probeConns; n != 2 {
		t.Errorf("%d connections: a stream reset must not cost the connection", n)
	}
}

// A GOAWAY, then the close: the stream at the last id, unanswered, fails
// (one per GOAWAY): as goaway with the GOAWAY's error code in the sample,
// as closed after a NO_ERROR GOAWAY (the server broke its word); streams
// above it were refused by the GOAWAY and go out again on the next
// connection.
func TestH2GoAwayError(t *testing.T) {
	for _, tc := range []struct {
		code          http2.ErrCode
		class, sample string
	}{
		{http2.ErrCodeEnhanceYourCalm, "goaway", "GOAWAY ENHANCE_YOUR_CALM"},
		{http2.ErrCodeNo, "closed", "closed the HTTP/2 connection with the request unanswered"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			s := startRawH2(t, func(_, onConn int64) rawAction {
				if onConn == 20 {
					return rawAction{kind: "goaway", code: tc.code}
				}
				return rawAction{kind: "answer"}
			})
			cfg := Config{URL: s.url, HTTP2: true, Connections: 2, Duration: time.Second, Timeout: 2 * time.Second}
			res := runH2Test(t, cfg)
			g := res.Errors[tc.class]
			if g == 0 || int64(g) != s.lostByGo.Load() || res.OK != uint64(s.answered.Load()) || res.Requests != res.OK+g || res.ErrorCount() != g {
				t.Fatalf("requests %d ok %d errors %v; server answered %d, lost %d to its GOAWAYs", res.Requests, res.OK, res.Errors, s.answered.Load(), s.lostByGo.Load())
			}
			if res.H2.GoAways != uint64(s.goaways.Load()) || res.H2.GoAwayCodes[tc.code.String()] != res.H2.GoAways {
				t.Errorf("goaways %d codes %v, server sent %d", res.H2.GoAways, res.H2.GoAwayCodes, s.goaways.Load())
			}
			if !strings.Contains(res.ErrorSamples[tc.class], tc.sample) {
				t.Errorf("%s sample %q", tc.class, res.ErrorSamples[tc.class])
			}
			if res.H2.Refused == 0 {
				t.Errorf("no request refused by a GOAWAY: with 10 streams in flight some were above the last stream id")
			}
		})
	}
}

// Requests past --timeout are cancelled with RST_STREAM CANCEL and counted
// as timeouts; the connection carries on with its other streams.
func TestH2TimeoutCancels(t *testing.T) {
	s := startRawH2(t, func(n, _ int64) rawAction {
		if n%10 == 0 {
			return rawAction{kind: "hang"}
		}
		return rawAction{kind: "answer"}
	})
	cfg := Config{URL: s.url, HTTP2: true, Connections: 2, Duration: 1500 * time.Millisecond, Timeout: 300 * time.Millisecond}
	res := runH2Test(t, cfg)
	to := res.Errors["timeout"]
	if to == 0 || int64(to) != s.hung.Load() || res.OK != uint64(s.answered.Load()) || res.Requests != res.OK+to || res.ErrorCount() != to {
		t.Fatalf("requests %d ok %d errors %v; server answered %d, left %d hanging", res.Requests, res.OK, res.Errors, s.answered.Load(), s.hung.Load())
	}
	// Every timeout during the run sent a CANCEL; those given up when the
	// drain ended (at most one per stream) did not need to.
	if c := uint64(s.cancelled.Load()); c > to || c+uint64(cfg.Connections*DefaultStreams) < to {
		t.Errorf("server got %d RST_STREAM CANCEL for %d timeouts", c, to)
	}
	if n := s.conns.Load() - probeConns; n != 2 {
		t.Errorf("%d connections: a timeout must not cost the connection", n)
	}
}

// --new-conn: one stream per connection, a connection (and over TLS a
// handshake) per request.
func TestH2NewConn(t *testing.T) {
	s := testutil.StartH2Server(t, fixedBody(1024), testutil.H2Options{TLS: true})
	cfg := h2Config(s, "/1k")
	cfg.NewConn = true
	cfg.Duration = time.Second
	res := runH2Test(t, cfg)
	if res.OK == 0 || res.ErrorCount() != 0 || res.Streams != 1 {
		t.Fatalf("ok %d errors %v %v streams %d", res.OK, res.Errors, res.ErrorSamples, res.Streams)
	}
	if n := s.Conns.Load() - probeConns; n != int64(res.OK) || res.Handshakes != res.OK {
		t.Errorf("%d connections and %d handshakes for %d requests: want one each per request", n, res.Handshakes, res.OK)
	}
}

// Bodies: 1 MiB downloads are not throttled by flow control and hash to
// the right digest; a wrong digest makes every response body_mismatch.
func TestH2BodiesVerified(t *testing.T) {
	body := testutil.Body(1 << 20)
	sum := sha256.Sum256(body)
	s := testutil.StartH2Server(t, fixedBody(1<<20), testutil.H2Options{TLS: true})
	cfg := h2Config(s, "/1m")
	cfg.Connections = 2
	cfg.Streams = 4
	cfg.Duration = time.Second
	cfg.VerifySHA256 = sum[:]
	res := runH2Test(t, cfg)
	if res.OK == 0 || res.ErrorCount() != 0 || res.BytesRead != res.OK<<20 {
		t.Fatalf("ok %d errors %v %v bytes %d", res.OK, res.Errors, res.ErrorSamples, res.BytesRead)
	}
	bad := sha256.Sum256([]byte("not the body"))
	cfg.VerifySHA256 = bad[:]
	res = runH2Test(t, cfg)
	if res.OK != 0 || res.Errors["body_mismatch"] == 0 || res.ErrorCount() != res.Errors["body_mismatch"] {
		t.Fatalf("wrong digest: ok %d errors %v", res.OK, res.Errors)
	}
}

// A server that does not speak HTTP/2 fails every request, with a sample
// that says so: h2c against HTTP/1.1 as parse; over TLS a server that
// selects no ALPN protocol as tls, from either handshake engine.
func TestH2NotSpoken(t *testing.T) {
	plain := startServer(t, answerAnything("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	res := runH2Test(t, Config{URL: plain.url("http"), HTTP2: true, Connections: 1, Duration: 300 * time.Millisecond, Timeout: time.Second})
	if res.OK != 0 || res.Errors["parse"] == 0 || res.ErrorCount() != res.Errors["parse"] || !strings.Contains(res.ErrorSamples["parse"], "does not speak HTTP/2") {
		t.Errorf("h2c to HTTP/1.1: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
	ca, good, _, _ := testCerts(t)
	for _, engine := range []string{"lean", "std"} {
		srv := startServerTLS(t, &tls.Config{Certificates: []tls.Certificate{good}}, answerAnything("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		res := runH2Test(t, Config{URL: srv.url("https"), HTTP2: true, Connections: 1, Duration: 300 * time.Millisecond, Timeout: time.Second,
			TLS: TLSOptions{CAFile: ca, Engine: engine}})
		if res.OK != 0 || res.Errors["tls"] == 0 || res.ErrorCount() != res.Errors["tls"] || !strings.Contains(res.ErrorSamples["tls"], "did not select ALPN h2") {
			t.Errorf("%s: TLS without ALPN: ok %d errors %v %v", engine, res.OK, res.Errors, res.ErrorSamples)
		}
	}
}

// countBelow returns how many values of h are below v (to its precision).
func countBelow(h *hdr.Histogram, v int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.To <= v {
			n += b.Count
		}
	}
	return n
}

// A server that resets every connection as it accepts it: in open loop
// each due request still ends in its own error at once (the slot
// reconnects for the next one), none waits for the drain.
func TestH2ResetOnAccept(t *testing.T) {
	srv := startServer(t, resetOnAccept)
	cfg := Config{URL: srv.url("http"), HTTP2: true, Connections: 2, Rate: 200, Duration: time.Second, Timeout: time.Second}
	res := runH2Test(t, cfg)
	checkOpenAccounting(t, res, cfg)
	if res.OK != 0 || res.Errors["timeout"] != 0 || res.Errors["reset"]+res.Errors["closed"]+res.Errors["broken_pipe"] != 200 {
		t.Errorf("ok %d errors %v %v: want each of the 200 requests failed by the reset", res.OK, res.Errors, res.ErrorSamples)
	}
}

// TestH2PacingToleranceBatches is TestPacingToleranceBatches over HTTP/2:
// 230 requests/s, a 10 ms pacing tolerance, a server that answers after
// 3 ms. Requests leave at the ticks (corrected median ~8 ms); the
// responses, collected at the next tick, keep the kernel's receive time
// (uncorrected median the server's ~3 ms, not the tick's 10 ms).
func TestH2PacingToleranceBatches(t *testing.T) {
	s := testutil.StartH2Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * time.Millisecond)
		w.Write([]byte("ok"))
	}), testutil.H2Options{})
	cfg := h2Config(s, "/")
	cfg.Connections, cfg.Rate, cfg.Duration, cfg.Timeout = 2, 230, 2*time.Second, time.Second
	cfg.PacingTolerance, cfg.CPUs = 10*time.Millisecond, pin.CPUSet{lastCPU(t)}
	res := runH2Test(t, cfg)
	g, u, c := res.Generator, res.LatencyUncorrected, res.Latency
	t.Logf("uncorrected p50 %d p99 %d µs; corrected p50 %d p99 %d max %d µs; lag p50 %d p99 %d µs; %s",
		u.P50, u.P99, c.P50, c.P99, c.Max, g.LagP50us, g.LagP99us, g.Reason)
	if res.Requests != 460 || res.OK != 460 {
		t.Fatalf("requests %d ok %d errors %v", res.Requests, res.OK, res.Errors)
	}
	if testutil.Race {
		return
	}
	if u.P50 < 2_900 || u.P50 > 6_000 {
		t.Errorf("uncorrected p50 %d µs: want the server's ~3 ms (a late read must keep the arrival time)", u.P50)
	}
	if c.P50 < 5_500 || c.P50 > 10_500 {
		t.Errorf("corrected p50 %d µs: want ~8 ms (0-10 ms of pacing + 3 ms)", c.P50)
	}
}
