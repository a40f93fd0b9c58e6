package gen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/pin"
)

// Measurement truth: servers whose behaviour is known, and the numbers a
// run must report against them, derived in each test.

const okResp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// answerThenHang answers the first n requests it receives (over all
// connections) and then holds every connection open without answering.
func answerThenHang(n int64) func(net.Conn) {
	var count atomic.Int64
	return eachRequest(func(c net.Conn) bool {
		if count.Add(1) > n {
			io.Copy(io.Discard, c)
			return false
		}
		_, err := io.WriteString(c, okResp)
		return err == nil
	})
}

// TestStopAnsweringAccountsEveryRequest: 500 requests/s for 4 s with a 1 s
// timeout against a server that answers the first 1,500 requests (the
// first 3 s of the schedule) and then none.
//
// Accounting: the schedule owes 2,000 requests; 1,500 are answered and the
// other 500 must all be timeouts, none dropped (the pending queue holds
// 1,000), none missing.
//
// Latency: the 500 unanswered requests are intended at t = 3 + k/500 s.
// The first ten (one per connection) time out 1 s after they were sent,
// ~1.0 s each; the rest wait in the pending queue (or go out and hang
// again) until the drain ends one timeout after the stop, at 5 s, so each
// is given up after 5 - t seconds: spread evenly over (1, 2] s. Among all
// 2,000, p90 is the 300th-smallest of those 500: 1 + 300/500 = 1.6 s; p99
// the 480th: 1.96 s. The answered 1,500 are fast, so p50 is well below 50 ms.
func TestStopAnsweringAccountsEveryRequest(t *testing.T) {
	t.Parallel()
	srv := startServer(t, answerThenHang(1500))
	cfg := Config{URL: srv.url("http"), Rate: 500, Duration: 4 * time.Second, Timeout: time.Second, Connections: 10}
	res := runOnTime(t, cfg)
	t.Logf("requests %d ok %d errors %v unfinished %d; corrected p50 %d p90 %d p99 %d max %d µs",
		res.Requests, res.OK, res.Errors, res.Generator.Unfinished, res.Latency.P50, res.Latency.P90, res.Latency.P99, res.Latency.Max)
	if res.Requests != 2000 {
		t.Errorf("requests %d, want the 2000 of the schedule", res.Requests)
	}
	if res.OK != 1500 || res.Errors["timeout"] != 500 || res.ErrorCount() != 500 {
		t.Errorf("ok %d timeouts %d errors %v: want 1500 answered and exactly the other 500 as timeouts", res.OK, res.Errors["timeout"], res.Errors)
	}
	if n := res.CorrectedHist.TotalCount(); n != 2000 {
		t.Errorf("corrected histogram holds %d values, want 2000", n)
	}
	if p := res.Latency.P90; p < 1_500_000 || p > 1_700_000 {
		t.Errorf("corrected p90 %d µs, want about 1.6 s (1.5..1.7)", p)
	}
	if p := res.Latency.P99; p < 1_900_000 || p > 2_050_000 {
		t.Errorf("corrected p99 %d µs, want about 1.96 s (1.9..2.05)", p)
	}
	if p := res.Latency.P50; p > 50_000 {
		t.Errorf("corrected p50 %d µs: the answered three quarters are fast", p)
	}
	if l := res.Latency2xx; l.P50 > 50_000 || res.Corrected2xxHist.TotalCount() != 1500 {
		t.Errorf("latency_2xx_us %+v over %d responses: want the 1500 answered ones only, fast", l, res.Corrected2xxHist.TotalCount())
	}
	if u := res.Generator.Unfinished; u < 400 || uint64(u) > res.Errors["timeout"] {
		t.Errorf("unfinished %d: want the ~490 still owed when the drain ended, all counted as timeouts", u)
	}
}

// serverClock is a serial server that also records when it finished each
// response, so a test can count what the server itself delivered in a window.
type serverClock struct {
	mu    sync.Mutex
	first time.Time
	done  []time.Time
}

// serialTimed answers one request at a time across all connections, each
// after delay (a capacity of 1/delay per second), recording each answer.
func (s *serverClock) serialTimed(delay time.Duration) func(net.Conn) {
	return eachRequest(func(c net.Conn) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.first.IsZero() {
			s.first = time.Now()
		}
		time.Sleep(delay)
		_, err := io.WriteString(c, okResp)
		s.done = append(s.done, time.Now())
		return err == nil
	})
}

// count returns the answers finished in [from, to) after the first request
// arrived.
func (s *serverClock) count(from, to time.Duration) (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.done {
		if at := d.Sub(s.first); at >= from && at < to {
			n++
		}
	}
	return n
}

// queueMedian returns the median corrected latency the queueing arithmetic
// gives for the requests of schedule indexes [from, to) at rate λ: the
// server answers in arrival order, so request j is done when the server
// finished its j-th answer, and it was intended at j/λ after the start
// (the first arrival, within a write of the start).
func (s *serverClock) queueMedian(from, to int, rate float64) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lat []time.Duration
	for j := from; j < to && j < len(s.done); j++ {
		lat = append(lat, s.done[j].Sub(s.first)-time.Duration(float64(j)/rate*1e9))
	}
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2]
}

// TestFixedCapacityWithWarmup offers twice a fixed capacity with a warmup.
//
// The server answers one request at a time after 2 ms: a capacity µ of
// about 500/s. The generator offers λ = 1,000/s for 3 s, of which the first
// second is warmup.
//
// achieved_rate counts 2xx completed inside the measured window [1 s, 3 s),
// whatever their intended time: the server's own count over that window /
// 2 s. (Under overload most of them were intended during the warmup.)
//
// Queueing: the server is busy from the first request on and answers in
// arrival order, so the j-th request of the schedule (intended at j/λ) is
// done when the server finishes its j-th answer, at d_j; its corrected
// latency is d_j - j/λ. At a steady µ that is j/µ - j/λ = t (λ/µ - 1) for
// t = j/λ: the window's requests (t in [1, 3)) spread evenly from λ/µ - 1
// to 3 (λ/µ - 1), median 2 (λ/µ - 1), about 2 s. The test takes d_j from
// the server's own clock instead of assuming a steady µ (a shared machine
// slows its sleeps), and allows for reordering across the 10 connections
// (a request moves by at most 10 service times).
func TestFixedCapacityWithWarmup(t *testing.T) {
	t.Parallel()
	var clock serverClock
	srv := startServer(t, clock.serialTimed(2*time.Millisecond))
	cfg := Config{URL: srv.url("http"), Rate: 1000, Duration: 3 * time.Second, Warmup: time.Second,
		Timeout: 10 * time.Second, Connections: 10}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(clock.count(time.Second, 3*time.Second)) / 2
	wantMedian := clock.queueMedian(1000, 3000, cfg.Rate)
	t.Logf("achieved %.1f/s, server %.1f/s over the window; corrected p50 %d µs, derived %v; requests %d errors %v",
		res.AchievedRate, want, res.Latency.P50, wantMedian, res.Requests, res.Errors)
	if res.AchievedRate < 0.9*want || res.AchievedRate > 1.1*want {
		t.Errorf("achieved_rate %.1f/s, want within 10%% of the server's own %.1f/s over the window", res.AchievedRate, want)
	}
	if p, w := float64(res.Latency.P50), float64(wantMedian.Microseconds()); p < 0.95*w || p > 1.05*w {
		t.Errorf("corrected p50 %.0f µs, want within 5%% of the queueing value %.0f µs", p, w)
	}
	if w := wantMedian.Seconds(); w < 1.5 {
		t.Errorf("derived median %.2f s: the server did not queue as designed (capacity above half the offered rate)", w)
	}
	if res.Requests != 2000 || res.ErrorCount() != 0 {
		t.Errorf("requests %d errors %v: want the 2000 of the measured window, all answered", res.Requests, res.Errors)
	}
	if res.Generator.Bottleneck {
		t.Errorf("the generator blamed itself for a saturated server: %s", res.Generator.Reason)
	}
}

// TestHeadRequests: a HEAD response carries Content-Length but no body.
func TestHeadRequests(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("a body of 26 bytes for GET"))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Method: "HEAD", Connections: 2, Duration: 500 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Errorf("HEAD: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
}

// TestTrailingBytesKeepTheResponse: bytes after a complete response (no
// request asked for them) do not fail it; the connection is dropped.
func TestTrailingBytesKeepTheResponse(t *testing.T) {
	t.Parallel()
	srv := startServer(t, reply(okResp+"HTTP/1.1 200 OK\r\n"))
	res := runOnTime(t, Config{URL: srv.url("http"), Connections: 2, Duration: 500 * time.Millisecond, Timeout: time.Second})
	if res.OK == 0 || res.ErrorCount() != 0 || res.OK != res.Requests {
		t.Errorf("ok %d requests %d errors %v %v", res.OK, res.Requests, res.Errors, res.ErrorSamples)
	}
	if res.Generator.Unsolicited != res.OK {
		t.Errorf("unsolicited %d, want one per response (%d)", res.Generator.Unsolicited, res.OK)
	}
}

// TestKeepAliveCloseIsRetried: a server that closes each connection after
// its third response, without Connection: close. The fourth request is
// already on its way when the close arrives; it is resent once on a new
// connection instead of failing.
func TestKeepAliveCloseIsRetried(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; i < 3; i++ {
			if readRequest(br) != nil {
				return
			}
			if _, err := io.WriteString(c, okResp); err != nil {
				return
			}
		}
	})
	res := runOnTime(t, Config{URL: srv.url("http"), Connections: 2, Duration: time.Second, Timeout: time.Second})
	t.Logf("ok %d retries %d errors %v", res.OK, res.Retries, res.Errors)
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Errorf("ok %d errors %v %v: the closes must be retried", res.OK, res.Errors, res.ErrorSamples)
	}
	// About every fourth request meets a closed connection (the server
	// may close before the request is written, then the write or read
	// fails, or after).
	if res.Retries == 0 || res.Retries > res.OK/2 {
		t.Errorf("retries %d for %d responses: want about one per three", res.Retries, res.OK)
	}
}

// TestRetryIsOnce: a server that reads each request and closes without an
// answer. A request on a fresh connection is not retried, so every request
// fails: retrying cannot turn a dead server into successes.
func TestRetryIsOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t, func(c net.Conn) {
		readRequest(bufio.NewReader(c))
	})
	res := runOnTime(t, Config{URL: srv.url("http"), Connections: 2, Duration: 500 * time.Millisecond, Timeout: time.Second})
	if res.OK != 0 || res.Errors["closed"] == 0 || res.Retries != 0 {
		t.Errorf("ok %d closed %d retries %d: a request on a fresh connection is never retried", res.OK, res.Errors["closed"], res.Retries)
	}
}

// TestHlogMatchesPerSecond reads the interval log back with the
// HdrHistogram library: one interval per per-second entry, each with the
// same max and count, Interval_Max in milliseconds, a whole-second
// BaseTime and StartTime with its milliseconds.
func TestHlogMatchesPerSecond(t *testing.T) {
	t.Parallel()
	srv := startServer(t, reply(okResp))
	var log bytes.Buffer
	res := runOnTime(t, Config{URL: srv.url("http"), Rate: 300, Duration: 2500 * time.Millisecond, Timeout: time.Second, Connections: 4}, result.NewHdrLog(&log))
	text := log.String()
	var base, start float64
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "#[BaseTime: "); ok {
			base, _ = strconv.ParseFloat(strings.Fields(v)[0], 64)
		}
		if v, ok := strings.CutPrefix(line, "#[StartTime: "); ok {
			start, _ = strconv.ParseFloat(strings.Fields(v)[0], 64)
		}
	}
	if base == 0 || base != math.Trunc(base) || start < base || start >= base+1 {
		t.Errorf("BaseTime %v StartTime %v: want a whole second and the start within it", base, start)
	}
	rd := hdr.NewHistogramLogReader(strings.NewReader(text))
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if line != "" && line[0] != '#' && line[0] != '"' {
			lines = append(lines, line)
		}
	}
	// 2.5 s: three entries, or four when the drain after the stop ran past
	// 3 s (a slow moment of the machine).
	if n := len(res.PerSecond); len(lines) != n || n < 3 || n > 4 {
		t.Fatalf("%d interval lines, %d per-second entries; want 3 or 4 each (2.5 s and the drain)", len(lines), n)
	}
	for i, ps := range res.PerSecond {
		h, err := rd.NextIntervalHistogram()
		if err != nil || h == nil {
			t.Fatalf("interval %d: %v", i, err)
		}
		if h.Max() != ps.Maxus || uint64(h.TotalCount()) != ps.OK+ps.Non2xx+ps.Errors {
			t.Errorf("second %d: log max %d count %d, JSON max_us %d count %d", i, h.Max(), h.TotalCount(), ps.Maxus, ps.OK+ps.Non2xx+ps.Errors)
		}
		f := strings.Split(lines[i], ",")
		if f[2] != fmt.Sprintf("%.3f", float64(ps.Maxus)/1000) {
			t.Errorf("second %d: Interval_Max %s, want %.3f (ms)", i, f[2], float64(ps.Maxus)/1000)
		}
		ts, _ := strconv.ParseFloat(f[0], 64)
		if d := base + ts - (start + float64(i)); d < -0.002 || d > 0.002 {
			t.Errorf("second %d starts at %.3f after BaseTime, want StartTime + %d s", i, ts, i)
		}
	}
	ps := res.PerSecond
	last := ps[len(ps)-1]
	if len(ps) == 3 && (last.DurS < 0.5 || last.DurS >= 1) || len(ps) == 4 && (last.DurS <= 0 || last.DurS >= 1) {
		t.Errorf("last entry dur_s %.3f of %d: want the partial last second's length", last.DurS, len(ps))
	}
	for _, s := range ps[:len(ps)-1] {
		if s.DurS != 1 {
			t.Errorf("second %d: dur_s %v, want 1", s.T, s.DurS)
		}
	}
}

// TestLagOncePerWakeup: the lag is sampled once per wakeup that finds
// requests due, against the earliest of them, and never for the warmup.
func TestLagOncePerWakeup(t *testing.T) {
	srv := startServer(t, reply(okResp))
	l := handLoop(t, Config{URL: srv.url("http"), Rate: 1000, Connections: 4})
	time.Sleep(5 * time.Millisecond)
	before := l.lc.now()
	l.lc.admit(l.lc.now(), false) // requests 0..5 or so are due: one sample
	if n := l.lc.rec.lag.TotalCount(); n != 1 {
		t.Fatalf("%d lag samples after one wakeup, want 1", n)
	}
	if v := l.lc.rec.lag.Max(); v < before/1000 || v > l.lc.now()/1000+1 {
		t.Errorf("lag %d µs, want the time since request 0 was due (%d..%d µs)", v, before/1000, l.lc.now()/1000)
	}
	// A wakeup just before the next request is due finds nothing due: no
	// sample. (Its time is given, not read: the clock may have passed the
	// next due time by now if the host stalled this thread for 1 ms.)
	l.lc.admit(l.lc.nextDue-1, false)
	if n := l.lc.rec.lag.TotalCount(); n != 1 {
		t.Errorf("%d lag samples after a wakeup with nothing due, want 1", n)
	}
	l.lc.rec.warmup = int64(time.Hour) // every request is warmup now
	time.Sleep(3 * time.Millisecond)
	l.lc.admit(l.lc.now(), false)
	if n := l.lc.rec.lag.TotalCount(); n != 1 {
		t.Errorf("%d lag samples: warmup requests were sampled", n)
	}
}

func TestHistCeiling(t *testing.T) {
	cfg := Config{Duration: 100 * time.Second, Timeout: 30 * time.Second}
	h := newHistMax(histCeiling(&Prepared{Config: cfg}))
	record(h, 150_000_000) // 150 s: a request pending from the start to the end of the drain
	if got := h.Max(); got < 149_000_000 || got > 151_000_000 {
		t.Errorf("150 s recorded as %d µs: the ceiling must be at least duration + 2 x timeout", got)
	}
	short := Config{Duration: time.Second, Timeout: time.Second}
	if histCeiling(&Prepared{Config: short}) != histFloor {
		t.Errorf("ceiling %d for a short run, want the 60 s floor", histCeiling(&Prepared{Config: short}))
	}
}

// The spinner: a child process that spins on one CPU, to starve a loop
// pinned there. It stops when its stdin closes, and after 60 s anyway.
const spinEnv = "LOADLAB_TEST_SPIN_CPU"

func spinner() {
	cpu, _ := strconv.Atoi(os.Getenv(spinEnv))
	if err := pin.RestrictProcess(pin.CPUSet{cpu}); err != nil {
		fmt.Println("ERR", err)
		return
	}
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	fmt.Println("spinning")
	end := time.Now().Add(60 * time.Second)
	for time.Now().Before(end) {
	}
}

// startSpinner starts a process that keeps cpu busy until the test ends.
func startSpinner(t *testing.T, cpu int) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), spinEnv+"="+strconv.Itoa(cpu), "GOMAXPROCS=1")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "spinning" {
		t.Fatalf("spinner: %q", line)
	}
}

// needCPUs returns the allowed CPUs, or skips the test when there are fewer
// than n (why says what the test needs them for).
func needCPUs(t *testing.T, n int, why string) pin.CPUSet {
	cpus, err := pin.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) < n {
		t.Skipf("needs %d CPUs %s", n, why)
	}
	return cpus
}

// lastCPU is the CPU a starvation test uses: the last one allowed.
func lastCPU(t *testing.T) int {
	cpus, err := pin.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	return cpus[len(cpus)-1]
}

// TestVerdictStarved: another process spins on the loop's CPU during a
// closed-loop run against a server process on the other CPUs. The responses
// are 1 MiB bodies the loop hashes (--verify-sha256): several times the
// server's work per response, so the loop, not the server, is the slower
// side and always has a response to handle. Always runnable, it runs about
// half its wall time (the kernel shares the CPU) and waits to run the other
// half: busy + starved is near 1, and the generator must say it was the
// bottleneck, and why.
func TestVerdictStarved(t *testing.T) {
	res := runStarved(t, "plain", func(addr string, sum []byte) Config {
		return Config{URL: "http://" + addr + "/", Connections: 8, VerifySHA256: sum}
	})
	g := res.Generator
	if g.Starved[0] < 0.25 || g.Busy[0]+g.Starved[0] < 0.9 {
		t.Errorf("busy %.2f starved %.2f: a loop sharing its CPU with two spinners waits for about two thirds of it", g.Busy[0], g.Starved[0])
	}
}

// runStarved runs cfg (of the allocation server's address and the digest
// of its 1 MiB bodies) for 2 s on one CPU that two spinners share, the
// server (of mode) in a child process on the other CPUs, and checks that
// the self-check blames the generator, naming starvation. Two spinners:
// the loop gets about a third of its CPU, so the server, with a CPU of its
// own, stays ahead of it and the loop never waits for data (with one
// spinner, the loop at half a CPU hashing 1 MiB bodies could catch up with
// a server slowed by a noisy host, and idle 15% of the time).
func runStarved(t *testing.T, mode string, cfg func(addr string, sum []byte) Config) *result.Result {
	t.Helper()
	cpus := needCPUs(t, 2, "for the server apart from the loop's")
	cpu := cpus[len(cpus)-1]
	const size = 1 << 20
	dir := ""
	if mode != "plain" {
		dir = testutil.CertDir(t)
	}
	addr := startAllocServerOn(t, mode, size, dir, cpus[:len(cpus)-1])
	sum := sha256.Sum256(bytes.Repeat([]byte("x"), size))
	startSpinner(t, cpu)
	startSpinner(t, cpu)
	c := cfg(addr, sum[:])
	c.Duration, c.Timeout, c.CPUs = 2*time.Second, 2*time.Second, pin.CPUSet{cpu}
	res := runOnTime(t, c)
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
	g := res.Generator
	t.Logf("busy %v starved %v: %s", g.Busy, g.Starved, g.Reason)
	if !g.Bottleneck || !strings.Contains(g.Reason, "starved") {
		t.Errorf("bottleneck %v, reason %q: want true, naming starvation", g.Bottleneck, g.Reason)
	}
	return res
}

// TestVerdictSaturatedServer: a server with a fixed capacity of 200/s,
// offered 400/s. Its latency grows to seconds; the generator idles between
// sends. The bottleneck is the server, and the generator must not blame
// itself.
func TestVerdictSaturatedServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, serialSlow(okResp, 5*time.Millisecond))
	res := runOnTime(t, Config{URL: srv.url("http"), Rate: 400, Connections: 10, Duration: 2 * time.Second, Timeout: 5 * time.Second})
	g := res.Generator
	t.Logf("busy %v starved %v lag p99 %d µs; corrected p99 %d µs", g.Busy, g.Starved, g.LagP99us, res.Latency.P99)
	if g.Bottleneck {
		t.Errorf("generator blamed itself for a saturated server: %s", g.Reason)
	}
	if res.Latency.P50 < 300_000 {
		t.Errorf("corrected p50 %d µs: the server's queue must show", res.Latency.P50)
	}
}

// TestVerdictHealthy: a moderate rate against a fast server. Not beside
// the other tests: their runs share its CPUs, and its send lag then is
// real (CI failed it so, all three runs: lag p95 1.4 ms, busy 2%).
func TestVerdictHealthy(t *testing.T) {
	srv := startServer(t, reply(okResp))
	checkHealthy(t, "500/s against a fast server", func() *result.Result {
		res := runOnTime(t, Config{URL: srv.url("http"), Rate: 500, Connections: 10, Duration: 2 * time.Second, Timeout: time.Second})
		if res.Requests != 1000 || res.OK != 1000 {
			t.Errorf("requests %d ok %d, want 1000", res.Requests, res.OK)
		}
		return res
	})
}

// healthyAttempts bounds checkHealthy's runs.
const healthyAttempts = 3

// checkHealthy runs a load the generator carries easily, up to
// healthyAttempts times, and fails unless one run's verdict is healthy, or
// flags only send lag that this machine's own sleeps explain (the probe
// after the run, wakefloor.go): a VM whose host wakes threads late makes
// any program late, and the verdict rightly says so then. A generator that
// is late by itself, or a busy/starved rule that fires at such a load,
// fails every run.
func checkHealthy(t *testing.T, load string, run func() *result.Result) {
	t.Helper()
	var why []string
	for i := range healthyAttempts {
		g := run().Generator
		if !g.Bottleneck {
			return
		}
		f := g.WakeFloor
		// The machine alone was late by at least 500 µs at the judged
		// quantile (half the lag rule's 1 ms floor, written out so that a
		// broken rule cannot move it): a lag rule that fires on less
		// still fails on a machine that wakes on time.
		if f != nil && f.Explains && f.AtQuantileUs >= 500 && !strings.Contains(g.Reason, "had no time to spare") {
			t.Logf("run %d: lag the machine explains: %s", i+1, g.Reason)
			return
		}
		why = append(why, fmt.Sprintf("run %d: %s (busy %v starved %v)", i+1, g.Reason, g.Busy, g.Starved))
	}
	t.Errorf("bottleneck at %s in each of %d runs:\n%s", load, healthyAttempts, strings.Join(why, "\n"))
}

// TestWakeFloorJudged: the probe's floor at the quantile the lag rule
// judged explains the lag when it is at least half of it, and the reason
// says which; a run whose lag rule did not fire keeps no floor.
func TestWakeFloorJudged(t *testing.T) {
	floor := func(late int64) measuredFloor {
		h := newHist()
		h.RecordValues(60, 900)
		h.RecordValues(late, 100) // the worst tenth
		return measuredFloor{WakeFloor: &result.WakeFloor{}, hist: h}
	}
	for _, tc := range []struct {
		late    int64
		explain bool
		words   string
	}{
		{late: 1_200, explain: true, words: "this machine wakes sleeping threads late itself"},
		{late: 900, explain: true, words: "not loadlab's loops"}, // 900 of 1.8 ms: half
		{late: 800, explain: false, words: "the machine itself woke on time just after the run"},
		{late: 100, explain: false, words: "the lateness was the generator's own"},
	} {
		g := result.Generator{LagP99us: 1_800}
		j := lagJudge{samples: 5000}
		j.verdict(&g, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 4_000}})
		if !g.Bottleneck || j.fired == nil || j.fired.name != "p99" || j.fired.beyond != 1_800 {
			t.Fatalf("lag p99 1.8 ms beside 4 ms: bottleneck %v, fired %+v", g.Bottleneck, j.fired)
		}
		j.noteWakeFloor(&g, floor(tc.late))
		f := g.WakeFloor
		if f == nil || f.Explains != tc.explain || f.Quantile != "p99" || f.LagUs != 1_800 || f.AtQuantileUs != tc.late {
			t.Errorf("floor %d µs at p99 against lag 1.8 ms: %+v, want explains %v", tc.late, f, tc.explain)
		}
		if !strings.Contains(g.Reason, tc.words) {
			t.Errorf("floor %d µs: reason %q lacks %q", tc.late, g.Reason, tc.words)
		}
	}
	healthy := result.Generator{LagP99us: 300}
	hj := lagJudge{samples: 5000}
	hj.verdict(&healthy, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 4_000}})
	hj.noteWakeFloor(&healthy, floor(2_000))
	if hj.fired != nil || healthy.WakeFloor != nil || healthy.Reason != "" {
		t.Errorf("no lag judged, yet %+v %q", healthy.WakeFloor, healthy.Reason)
	}
}

// TestProbeWakeFloor: the probe sleeps on every CPU it was given and
// reports the overshoot beyond the sleep asked for.
func TestProbeWakeFloor(t *testing.T) {
	cpus, err := pin.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f := probeWakeFloor(cpus[:1], 20, time.Millisecond)
	took := time.Since(start)
	if f.Sleeps != 20 || f.SleepUs != 1000 || f.P50us < 0 || f.P50us > f.P95us || f.P95us > f.P99us || f.P99us > f.Maxus {
		t.Errorf("%+v", f)
	}
	// 20 sleeps of 1 ms take at least 20 ms, and the overshoot recorded
	// adds up to no more than the time beyond them.
	if took < 20*time.Millisecond || time.Duration(f.P50us*10)*time.Microsecond > took-20*time.Millisecond {
		t.Errorf("20 sleeps took %v, p50 overshoot %d µs", took, f.P50us)
	}
	if both := probeWakeFloor(cpus, 5, time.Millisecond); both.Sleeps != int64(5*len(cpus)) {
		t.Errorf("%d sleeps on %d CPUs, want 5 each", both.Sleeps, len(cpus))
	}
}

// TestVerdictLagRule: the lag rule compares the generator's lateness with
// the latency it reports at the same quantile.
func TestVerdictLagRule(t *testing.T) {
	for _, tc := range []struct {
		lag, lat int64
		want     bool
	}{
		{lag: 2_000, lat: 5_000_000, want: false}, // 2 ms of lag beside 5 s of latency: harmless
		{lag: 2_000, lat: 6_000, want: true},      // a third of a 6 ms latency
		{lag: 800, lat: 1_000, want: false},       // under the 1 ms floor
	} {
		g := result.Generator{LagP99us: tc.lag}
		gJ := lagJudge{samples: 5000}
		gJ.verdict(&g, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: tc.lat}})
		if g.Bottleneck != tc.want {
			t.Errorf("lag p99 %d µs, latency p99 %d µs: bottleneck %v, want %v (%s)", tc.lag, tc.lat, g.Bottleneck, tc.want, g.Reason)
		}
	}
	// Lag within the pacing tolerance is the user's choice.
	tol := result.Generator{LagP99us: 1_050, PacingToleranceUs: 1_000}
	tolJ := lagJudge{samples: 5000}
	tolJ.verdict(&tol, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 1_200}})
	if tol.Bottleneck {
		t.Errorf("lag 1.05 ms at a 1 ms tolerance: %s", tol.Reason)
	}
	tol = result.Generator{LagP99us: 3_500, PacingToleranceUs: 1_000}
	tolJ = lagJudge{samples: 5000}
	tolJ.verdict(&tol, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 6_000}})
	if !tol.Bottleneck || !strings.Contains(tol.Reason, "beyond the pacing tolerance") {
		t.Errorf("lag 3.5 ms at a 1 ms tolerance beside 6 ms: %v %q", tol.Bottleneck, tol.Reason)
	}
	// p99 of 500 wakeups is 5 samples: not judged.
	few := result.Generator{LagP99us: 2_000}
	fewJ := lagJudge{samples: 500}
	fewJ.verdict(&few, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 6_000}})
	if few.Bottleneck {
		t.Errorf("p99 judged on 5 samples: %s", few.Reason)
	}
	// 200 wakeups (10 ms ticks for 2 s), 20 of them 40 ms late beside
	// responses of 10 ms: p95 has 10 samples beyond it and is judged.
	lagH, latH := newHist(), newHist()
	lagH.RecordValues(9_000, 180)
	lagH.RecordValues(50_000, 20)
	latH.RecordValues(10_000, 400)
	late := result.Generator{PacingToleranceUs: 10_000}
	lateJ := lagJudge{samples: 200, hist: lagH}
	lateJ.verdict(&late, nil, &result.Result{Mode: "open", CorrectedHist: latH, Latency: result.Latency{P50: 10_000, P99: 10_000}})
	if !late.Bottleneck || !strings.Contains(late.Reason, "p95") {
		t.Errorf("10 of 200 wakeups 40 ms late: %v %q, want p95 judged", late.Bottleneck, late.Reason)
	}
	g := result.Generator{CPUs: []int{3}}
	new(lagJudge).verdict(&g, []cpuShare{{busy: 0.5, wait: 0.45}}, &result.Result{Mode: "closed"})
	if !g.Bottleneck || !strings.Contains(g.Reason, "loop 0 (cpu 3)") || !strings.Contains(g.Reason, "starved") {
		t.Errorf("busy 0.5 + wait 0.45: %v %q", g.Bottleneck, g.Reason)
	}
	g = result.Generator{CPUs: []int{3}}
	new(lagJudge).verdict(&g, []cpuShare{{busy: 0.7, wait: 0.1, softirq: 0.05}}, &result.Result{Mode: "closed"})
	if g.Bottleneck {
		t.Errorf("busy 0.7 + starved 0.1 is under 90%%: %q", g.Reason)
	}
	// A lean QUIC loop starved for a quarter of its time limits the run
	// even with time to spare (its ACKs wait with it); a TCP loop does not.
	for _, tc := range []struct {
		quic    bool
		starved float64
		want    bool
	}{{true, 0.3, true}, {true, 0.2, false}, {false, 0.3, false}} {
		g = result.Generator{CPUs: []int{3}}
		j := &lagJudge{starvedLimits: tc.quic}
		j.verdict(&g, []cpuShare{{busy: 0.1, wait: tc.starved}}, &result.Result{Mode: "closed"})
		if g.Bottleneck != tc.want || tc.want && !strings.Contains(g.Reason, "loop 0 (cpu 3) was starved 30%") {
			t.Errorf("quic %v busy 0.1 starved %v: %v %q, want bottleneck %v", tc.quic, tc.starved, g.Bottleneck, g.Reason, tc.want)
		}
	}
	g = result.Generator{CPUs: []int{3}}
	(&lagJudge{perCPU: true}).verdict(&g, []cpuShare{{busy: 0.5, wait: 0.45}}, &result.Result{Mode: "closed"})
	if !strings.HasPrefix(g.Reason, "cpu 3 had no time") {
		t.Errorf("per CPU: %q", g.Reason)
	}
}

// TestAccountDisjoint: busy, starved and idle are disjoint and add up to
// the wall time. The numbers are a closed-loop run's on both CPUs of this
// machine (loop 0: its thread ran 28.8% of the window, waited to run
// 57.4%, and its CPU spent 18.2% in softirqs, most of them inside those
// two): adding the CPU's softirq to starved made busy + starved 104%.
// The CPU's softirq and steal are context, not a share of their own; the
// verdict judges busy + starved.
func TestAccountDisjoint(t *testing.T) {
	for _, s := range []cpuShare{
		{busy: 0.288, wait: 0.574, softirq: 0.182},
		{busy: 0.42, wait: 0.79, softirq: 0.3, steal: 0.05}, // reads a moment apart, or a CPU's threads waiting at once
		{busy: 1.02, wait: 0.01},
		{busy: 0.1, wait: 0, softirq: 0.5},
	} {
		b, st, id := s.split()
		if b < 0 || st < 0 || id < 0 || math.Abs(b+st+id-1) > 1e-9 || st != s.starved() || id != s.idle() {
			t.Errorf("%+v: busy %.3f starved %.3f idle %.3f: want three shares >= 0 that add up to 1", s, b, st, id)
		}
		if s.wait+s.busy <= 1 && (b != s.busy || st != s.wait) {
			t.Errorf("%+v: busy %.3f starved %.3f: want the thread's own run and run-queue wait", s, b, st)
		}
	}
	g := result.Generator{CPUs: []int{0}}
	new(lagJudge).verdict(&g, []cpuShare{{busy: 0.288, wait: 0.574, softirq: 0.182}}, &result.Result{Mode: "closed"})
	if g.Bottleneck {
		t.Errorf("busy 28.8%% + starved 57.4%% (idle 13.8%%) is under 90%%: %s", g.Reason)
	}
}

// TestAccountAddsUp: in a real closed-loop run each loop's busy, starved
// and idle are in [0, 1] and add up to 1 (to the rounding of the result).
func TestAccountAddsUp(t *testing.T) {
	srv := startServer(t, reply(okResp))
	res := runOnTime(t, Config{URL: srv.url("http"), Connections: 8, Duration: time.Second, Timeout: time.Second})
	g := res.Generator
	if len(g.Idle) != len(g.Busy) || len(g.Starved) != len(g.Busy) || len(g.Busy) == 0 {
		t.Fatalf("busy %v starved %v idle %v: one of each per loop", g.Busy, g.Starved, g.Idle)
	}
	for i := range g.Busy {
		b, st, id := g.Busy[i], g.Starved[i], g.Idle[i]
		if b < 0 || st < 0 || id < 0 || math.Abs(b+st+id-1) > 0.0021 {
			t.Errorf("loop %d: busy %.3f + starved %.3f + idle %.3f = %.3f, want 1", i, b, st, id, b+st+id)
		}
	}
}

// TestLagRuleAtReportedQuantiles: the lag rule judges the quantiles a row
// reports and ranks (p50, p95, p99). A fixed-rate run whose generator was
// a millisecond or two late on a few wakeups in 10,000 (p99.9) beside a
// corrected p99.9 of 8 ms is not generator-limited: its p99 and below are
// untouched, and the p99.9 gets a caveat. The same lag at p95 still is.
func TestLagRuleAtReportedQuantiles(t *testing.T) {
	rare, lat := newHist(), newHist()
	rare.RecordValues(40, 9_980)
	rare.RecordValues(2_200, 20)
	lat.RecordValues(600, 9_900)
	lat.RecordValues(8_000, 100)
	g := result.Generator{LagP50us: 40, LagP99us: 40, LagP999us: 2_200}
	gJ := lagJudge{samples: 10_000, hist: rare}
	gJ.verdict(&g, nil, &result.Result{Mode: "open", CorrectedHist: lat, Latency: result.Latency{P50: 600, P95: 600, P99: 800, P999: 8_000}})
	if g.Bottleneck {
		t.Errorf("rare lag at p99.9 only made the run generator-limited: %s", g.Reason)
	}
	if len(g.LagCaveats) != 1 || g.LagCaveats[0].Quantile != "p99.9" || g.LagCaveats[0].LagUs != 2_200 || g.LagCaveats[0].LatencyUs != 8_000 {
		t.Errorf("caveats %+v, want one on p99.9: lag 2.2 ms beside 8 ms", g.LagCaveats)
	}
	// 6% of the wakeups 2.2 ms late: p95's lag is material.
	often := newHist()
	often.RecordValues(40, 9_400)
	often.RecordValues(2_200, 600)
	g = result.Generator{LagP50us: 40, LagP99us: 2_200, LagP999us: 2_200}
	gJ = lagJudge{samples: 10_000, hist: often}
	gJ.verdict(&g, nil, &result.Result{Mode: "open", CorrectedHist: lat, Latency: result.Latency{P50: 600, P95: 3_000, P99: 8_000, P999: 9_000}})
	if !g.Bottleneck || !strings.Contains(g.Reason, "send lag p95") || len(g.LagCaveats) != 0 {
		t.Errorf("lag at p95: bottleneck %v %q caveats %+v, want p95 judged", g.Bottleneck, g.Reason, g.LagCaveats)
	}
}

// TestWithoutPwait2: where epoll_pwait2 is refused the loops pace with a
// timerfd, keep the schedule and say so.
func TestWithoutPwait2(t *testing.T) {
	noPwait2 = true
	defer func() { noPwait2 = false }()
	srv := startServer(t, reply(okResp))
	for _, tol := range []time.Duration{0, time.Millisecond} {
		res := runOnTime(t, Config{URL: srv.url("http"), Rate: 400, Connections: 4, Duration: time.Second, Timeout: time.Second, PacingTolerance: tol, IO: IOEpoll})
		if res.Requests != 400 || res.OK != 400 {
			t.Errorf("tolerance %v: requests %d ok %d errors %v: want the 400 of the schedule answered", tol, res.Requests, res.OK, res.Errors)
		}
		if p := res.Latency.P50; p > 20_000 {
			t.Errorf("tolerance %v: corrected p50 %d µs: the timerfd sleep must wake on time", tol, p)
		}
		noted := false
		for _, n := range res.Generator.Notes {
			noted = noted || strings.Contains(n, "epoll_pwait2 is not available")
		}
		if !noted {
			t.Errorf("notes %q: the fallback must be said", res.Generator.Notes)
		}
	}
}

// delayed answers every request after d.
func delayed(d time.Duration) func(net.Conn) {
	return eachRequest(func(c net.Conn) bool {
		time.Sleep(d)
		_, err := io.WriteString(c, okResp)
		return err == nil
	})
}

// TestPacingToleranceBatches: one loop at 230 requests/s (one every
// 4.35 ms, out of step with the ticks) with a 10 ms pacing tolerance
// against a server that answers after 3 ms.
//
// The loop wakes at multiples of 10 ms and sends what fell due since the
// last tick: each request leaves 0-10 ms after its intended time, evenly
// spread, so the corrected latency is that plus ~3 ms: median ~8 ms. The
// lag sampled at each tick is the age of the earliest request due in it,
// which fell due in the tick's first 4.35 ms: between 5.65 and 10 ms.
//
// Between ticks the loop sleeps through the responses and collects them at
// the next tick, 7 ms after they arrived; their completion time is the
// kernel's receive timestamp, so the uncorrected latency (from the write)
// is the server's ~3 ms, not the 10 ms tick. A loop that timed responses
// when it read them would report ~10 ms here.
func TestPacingToleranceBatches(t *testing.T) {
	t.Parallel()
	srv := startServer(t, delayed(3*time.Millisecond))
	res := runOnTime(t, Config{URL: srv.url("http"), Rate: 230, Connections: 8, Duration: 2 * time.Second,
		Timeout: time.Second, PacingTolerance: 10 * time.Millisecond, CPUs: pin.CPUSet{lastCPU(t)}})
	g := res.Generator
	u, c := res.LatencyUncorrected, res.Latency
	t.Logf("uncorrected p50 %d p99 %d µs; corrected p50 %d p99 %d max %d µs; lag p50 %d p99 %d µs; %s",
		u.P50, u.P99, c.P50, c.P99, c.Max, g.LagP50us, g.LagP99us, g.Reason)
	if res.Requests != 460 || res.OK != 460 {
		t.Fatalf("requests %d ok %d errors %v", res.Requests, res.OK, res.Errors)
	}
	if g.PacingToleranceUs != 10_000 {
		t.Errorf("pacing_tolerance_us %d, want 10000", g.PacingToleranceUs)
	}
	if u.P50 < 2_900 || u.P50 > 6_000 {
		t.Errorf("uncorrected p50 %d µs: want the server's ~3 ms (a late read must keep the arrival time)", u.P50)
	}
	if c.P50 < 5_500 || c.P50 > 10_500 {
		t.Errorf("corrected p50 %d µs: want ~8 ms (0-10 ms of pacing + 3 ms)", c.P50)
	}
	if g.LagP50us < 5_600 || g.LagP50us > 10_500 {
		t.Errorf("lag p50 %d µs: a tick comes 5.65-10 ms after the earliest request due in it", g.LagP50us)
	}
	if g.Bottleneck {
		t.Errorf("lag within the tolerance judged against the generator: %s", g.Reason)
	}
}

// TestPacingToleranceNeverEarly: with a tolerance no request leaves before
// its intended time: the lag sampled at each wakeup is never negative, and
// wakeups fall on the tolerance's ticks.
func TestPacingToleranceNeverEarly(t *testing.T) {
	s := schedule{tolerance: int64(time.Millisecond)}
	for _, tc := range []struct{ due, want int64 }{
		{0, 0}, {1, 1_000_000}, {999_999, 1_000_000}, {1_000_000, 1_000_000}, {1_000_001, 2_000_000},
	} {
		s.nextDue = tc.due
		if got := s.wakeFor(); got != tc.want || got < tc.due {
			t.Errorf("due %d: wake at %d, want %d", tc.due, got, tc.want)
		}
	}
	s.tolerance = 0
	s.nextDue = 123
	if s.wakeFor() != 123 {
		t.Error("without a tolerance the loop wakes at the intended time")
	}
}

// TestPacingToleranceOwesTheLastTick: the last requests before the stop are
// sent even when their tick would come after it. 200/s for 2.005 s with a
// 10 ms tolerance: requests 0..400 are due (the last at 2.000 s, its tick at
// 2.010 s, after the stop).
func TestPacingToleranceOwesTheLastTick(t *testing.T) {
	t.Parallel()
	srv := startServer(t, reply(okResp))
	res := runOnTime(t, Config{URL: srv.url("http"), Rate: 200, Connections: 4, Duration: 2005 * time.Millisecond,
		Timeout: time.Second, PacingTolerance: 10 * time.Millisecond})
	if res.Requests != 401 || res.OK != 401 {
		t.Errorf("requests %d ok %d: want the 401 due before the stop (errors %v %v)", res.Requests, res.OK, res.Errors, res.ErrorSamples)
	}
}

// TestWakeProbeDuringRun: with Config.WakeProbe the floor is measured
// through the measured window, on each loop's CPU, whether the lag rule
// fired or not. A sleep takes at least WakeProbeSleep, so a CPU has no
// more sleeps than the window has milliseconds; a probe that runs at all
// through the window has far more than a tenth of them. Without it, a
// run whose lag rule did not fire keeps no floor.
func TestWakeProbeDuringRun(t *testing.T) {
	t.Parallel()
	srv := startServer(t, reply(okResp))
	cpus, err := pin.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	const window = time.Second
	cfg := Config{URL: srv.url("http"), Rate: 200, Connections: 2, Duration: window + 300*time.Millisecond, Warmup: 300 * time.Millisecond,
		Timeout: time.Second, CPUs: pin.CPUSet{cpus[0]}, WakeProbe: true}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Generator.WakeFloor
	if f == nil || !f.During || len(f.CPUs) != 1 || f.CPUs[0] != cpus[0] || f.SleepUs != WakeProbeSleep.Microseconds() {
		t.Fatalf("wake floor %+v, want one measured during the run on CPU %d", f, cpus[0])
	}
	most := int64(window / WakeProbeSleep)
	if f.Sleeps > most || f.Sleeps < most/10 {
		t.Errorf("%d sleeps in a %v window, want between %d and %d", f.Sleeps, window, most/10, most)
	}
	if f.P50us > f.P99us || f.P99us > f.Maxus {
		t.Errorf("quantiles out of order: %+v", f)
	}
	cfg.WakeProbe = false
	if res, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if g := res.Generator; g.WakeFloor != nil && (g.WakeFloor.During || !g.Bottleneck) {
		t.Errorf("without WakeProbe: floor %+v (bottleneck %v)", g.WakeFloor, g.Bottleneck)
	}
}
