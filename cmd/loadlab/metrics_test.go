package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/metrics"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/promtest"
)

// metricsAt reads the "metrics at http://ADDR/metrics" line of a run's
// standard error and returns ADDR; the rest of stderr goes to rest.
func metricsAt(t *testing.T, stderr io.Reader, rest *strings.Builder) string {
	t.Helper()
	re := regexp.MustCompile(`metrics at http://([^/]+)/metrics`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
					rest.WriteString(sc.Text() + "\n")
				}
			}()
			return m[1]
		}
		rest.WriteString(sc.Text() + "\n")
	}
	t.Fatalf("the run never said where its metrics are:\n%s", rest.String())
	return ""
}

// bucketOf is the index of the bucket of Buckets that holds v seconds.
func bucketOf(v float64) int {
	for i, b := range metrics.Buckets {
		if v <= b*(1+1e-9) {
			return i
		}
	}
	return len(metrics.Buckets)
}

// TestGenMetricsInPrometheus: a fixed-rate run against the built-in
// backend, scraped every second by a real Prometheus, ends on the
// result's own numbers: the counters equal results.json's exactly,
// increase() over the run is within 2% of them, the p99 from the
// histogram is within one bucket of the result's corrected p99, and the
// busy gauge while the run went averages within 0.05 of the result's.
func TestGenMetricsInPrometheus(t *testing.T) {
	// Beside TestLabRunMetricsInPrometheus: both mostly wait for scrapes,
	// and each compares its metrics with its own run's result.
	t.Parallel()
	prom := promtest.Start(t)
	srv := startBackend(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := cliCommand(t, "gen", "-q", "--rate", "1000", "-c", "4", "-d", "10s", "--cpus", "1", "--start-at", "+8s",
		"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "4s", "--metrics-label", "run=promtest", "--json", out, "http://"+srv.Addr()+"/1k")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	addr := metricsAt(t, stderr, &rest)
	first := prom.Target(addr)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gen: %v\n%s", err, rest.String())
	}
	exited := time.Now()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res result.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests < 9000 {
		t.Fatalf("the run made %d requests, want about 10,000", res.Requests)
	}
	sel := `{run="promtest"}`
	// The last sample of the run (running is 0 once the result is in),
	// scraped during the linger.
	at := exited.Add(-time.Second)
	// (timestamp() of a plain selector is the sample's own time; of an
	// expression, the evaluation's.)
	last := time.UnixMilli(int64(math.Round(prom.One(`timestamp(loadlab_gen_running`+sel+`)`, at) * 1000)))
	if v := prom.One(`loadlab_gen_running`+sel, last); v != 0 {
		t.Fatalf("the last scrape before the exit says running %v: the linger did not show the final values", v)
	}
	if exited.Sub(last) > 4*time.Second+time.Second {
		t.Fatalf("the last scrape with the final values was at %v, %v before the exit", last, exited.Sub(last))
	}
	var errs uint64
	for _, n := range res.Errors {
		errs += n
	}
	for q, want := range map[string]uint64{
		`loadlab_gen_requests_total` + sel:         res.Requests,
		`loadlab_gen_ok_total` + sel:               res.OK,
		`sum(loadlab_gen_errors_total` + sel + `)`: errs,
		`loadlab_gen_read_bytes_total` + sel:       res.BytesRead,
		`loadlab_gen_latency_seconds_count` + sel:  res.Requests,
		`loadlab_gen_responses_total{code="200"}`:  res.Status["200"],
	} {
		if got := prom.One(q, last); got != float64(want) {
			t.Errorf("%s = %v at the end, results.json says %d", q, got, want)
		}
	}
	// The first scrape came before the run started (--start-at): its
	// counters are 0, so increase() over a range from before it to the
	// last scrape extrapolates over neither edge.
	if v := prom.One(`loadlab_gen_requests_total`+sel, first); v != 0 {
		t.Fatalf("the first scrape already counted %v requests: the run started before Prometheus scraped it", v)
	}
	window := fmt.Sprintf("[%dms]", last.Sub(first.Add(-30*time.Second)).Milliseconds())
	for q, want := range map[string]uint64{
		`increase(loadlab_gen_requests_total` + sel + window + `)`: res.Requests,
		`increase(loadlab_gen_ok_total` + sel + window + `)`:       res.OK,
	} {
		got := prom.One(q, last)
		if math.Abs(got-float64(want)) > 0.02*float64(want) {
			t.Errorf("%s = %.0f, results.json says %d: more than 2%% apart", q, got, want)
		}
	}
	p99 := prom.One(`histogram_quantile(0.99, loadlab_gen_latency_seconds_bucket`+sel+`)`, last)
	want := float64(res.Latency.P99) / 1e6
	if d := bucketOf(p99) - bucketOf(want); d < -1 || d > 1 {
		t.Errorf("histogram_quantile(0.99) = %.6f s (bucket %d), results.json's corrected p99 %.6f s (bucket %d): more than one bucket apart",
			p99, bucketOf(p99), want, bucketOf(want))
	}
	// The busy gauge while the run went: the seconds whose Live was not
	// the final one, from the run's second second on (the first has no
	// account yet).
	busy, err := prom.Range(`loadlab_gen_cpu_share{state="busy",run="promtest"} and on() loadlab_gen_running`+sel+` == 1`, last.Add(-30*time.Second), last, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(busy) != 1 || len(busy[0].Points) < 5 {
		t.Fatalf("busy gauge during the run: %v, want one series of at least 5 seconds", busy)
	}
	var sum float64
	for _, p := range busy[0].Points {
		sum += p.V
	}
	mean := sum / float64(len(busy[0].Points))
	if len(res.Generator.Busy) != 1 || math.Abs(mean-res.Generator.Busy[0]) > 0.05 {
		t.Errorf("busy gauge averaged %.3f over %d s of the run, results.json's busy %v: more than 0.05 apart", mean, len(busy[0].Points), res.Generator.Busy)
	}
	t.Logf("requests %d, p99 %d µs (histogram_quantile %.0f µs), busy %.3f (gauge %.3f over %d s)", res.Requests, res.Latency.P99, p99*1e6, res.Generator.Busy[0], mean, len(busy[0].Points))
}

// TestGenMetricsAddrRefused: a --metrics-addr in use, or off loopback
// without --metrics-allow-remote (--allow-remote, for targets, is not
// enough), is a one-line usage error before the run starts.
func TestGenMetricsAddrRefused(t *testing.T) {
	srv := startBackend(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct {
		addr, want string
		extra      []string
	}{
		{ln.Addr().String(), "address already in use", nil},
		{"0.0.0.0:0", "--metrics-allow-remote", nil},
		{"0.0.0.0:0", "--metrics-allow-remote", []string{"--allow-remote"}},
		{"nonsense", "HOST:PORT", nil},
	} {
		t0 := time.Now()
		code, stderr := captureRun(t, "gen", append(c.extra, "-q", "-d", "30s", "--rate", "10", "--metrics-addr", c.addr, "http://"+srv.Addr()+"/1k")...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--metrics-addr %s: exit %d, stderr %q: want 2 and one line saying %q", c.addr, code, stderr, c.want)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("--metrics-addr %s: refused after %v: the run started first", c.addr, d)
		}
	}
}

// TestMetricsAllowRemoteFlag: a metrics listener off loopback takes
// --metrics-allow-remote, on gen, lab run and serve alike; lab run's
// --allow-remote (its --serve page's) no longer allows it.
func TestMetricsAllowRemoteFlag(t *testing.T) {
	srv := startBackend(t)
	code, stderr := captureRun(t, "gen", "-q", "-d", "500ms", "--metrics-allow-remote", "--metrics-addr", "0.0.0.0:0", "--metrics-linger", "0s", "http://"+srv.Addr()+"/1k")
	if code != 0 || !strings.Contains(stderr, "metrics at http://") {
		t.Errorf("gen --metrics-allow-remote --metrics-addr 0.0.0.0:0: exit %d, stderr %q", code, stderr)
	}
	code, _, errs := runCLI(t, "lab", "run", "--plan", "quick", "--out", t.TempDir(), "--dry-run", "--allow-remote", "--metrics-addr", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(errs, "--metrics-allow-remote") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("lab run --allow-remote --metrics-addr 0.0.0.0:0: exit %d, stderr %q: want 2 and one line naming --metrics-allow-remote", code, errs)
	}
	for _, sub := range [][]string{{"lab", "run", "--plan", "quick", "--out", t.TempDir(), "--dry-run"}, {"serve", "--listen", "127.0.0.1:0"}} {
		if code, _, errs := runCLI(t, append(sub, "--metrics-allow-remote", "--help")...); code != 0 || strings.Contains(errs, "unknown flag") {
			t.Errorf("%s --metrics-allow-remote: exit %d, %s", sub[0], code, errs)
		}
	}
}
