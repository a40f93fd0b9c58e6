// Package promtest runs a real Prometheus (Debian's prometheus package,
// found as the lab finds its programs, internal/findbin) for tests: its own data directory, a 1 s scrape interval,
// targets given through a file that the test writes once it knows them
// (file service discovery, watched with inotify), and queries over its
// HTTP API. Tests skip when prometheus is not installed (make test
// installs it).
package promtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/testutil"
)

// Prometheus is a running Prometheus server of a test.
type Prometheus struct {
	URL     string // http://127.0.0.1:PORT
	targets string // the file_sd file
	t       testing.TB
}

// Start starts Prometheus scraping every second the targets given here
// (HOST:PORT, path /metrics: scraped from its start) and what Target adds
// later (file service discovery: Prometheus passes discovered targets on
// at most every 5 s), and waits until it is ready. It stops with the
// test.
func Start(t testing.TB, static ...string) *Prometheus {
	t.Helper()
	bin, err := findbin.FindBinary("prometheus")
	if errors.Is(err, findbin.ErrNotFound) {
		t.Skip("prometheus not installed (make deps installs it)")
	}
	if err != nil {
		t.Fatal(err) // one the tests, run as root, may not run
	}
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.json")
	if err := os.WriteFile(targets, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := json.Marshal(static)
	if static == nil {
		st = []byte("[]")
	}
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: loadlab
    static_configs:
      - targets: %s
    file_sd_configs:
      - files: [%q]
        refresh_interval: 1s
`, st, targets)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The port is picked free and Prometheus may lose it to another
	// process before it binds: try again with a new one.
	for attempt := 0; attempt < 5; attempt++ {
		port := testutil.FreePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr, "--log.level=warn")
		log, err := os.Create(filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", attempt)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start prometheus: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		p := &Prometheus{URL: "http://" + addr, targets: targets, t: t}
		if p.awaitReady(exited, 30*time.Second) {
			t.Cleanup(func() {
				_ = cmd.Process.Signal(os.Interrupt)
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
					<-exited
				}
				log.Close()
			})
			return p
		}
		_ = cmd.Process.Kill()
		<-exited
		log.Close()
		b, _ := os.ReadFile(log.Name())
		if !strings.Contains(string(b), "address already in use") {
			t.Fatalf("prometheus did not become ready:\n%s", b)
		}
	}
	t.Fatal("prometheus: no free port in 5 attempts")
	return nil
}

func (p *Prometheus) awaitReady(exited <-chan struct{}, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// Target makes Prometheus scrape addr (HOST:PORT, path /metrics) from
// now on, waits until its first scrape of it succeeded and returns that
// scrape's time.
func (p *Prometheus) Target(addr string) time.Time {
	p.t.Helper()
	b, _ := json.Marshal([]map[string]any{{"targets": []string{addr}}})
	if err := p.write(b); err != nil {
		p.t.Fatal(err)
	}
	return p.FirstScrape(addr)
}

func (p *Prometheus) write(b []byte) error {
	tmp := p.targets + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p.targets)
}

// Scraping waits until Prometheus scrapes addr, up or not (its first
// targets arrive through its discovery manager, seconds after its
// start).
func (p *Prometheus) Scraping(addr string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if v, err := p.Query(fmt.Sprintf(`up{instance=%q}`, addr), time.Time{}); err == nil && len(v) == 1 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("prometheus never tried to scrape %s", addr)
}

// FirstScrape waits until Prometheus has scraped addr successfully and
// returns that scrape's time.
func (p *Prometheus) FirstScrape(addr string) time.Time {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		// timestamp() of a plain selector: the scrape's own time.
		v, err := p.Query(fmt.Sprintf(`timestamp(up{instance=%q})`, addr), time.Time{})
		if up, _ := p.Query(fmt.Sprintf(`up{instance=%q}`, addr), time.Time{}); err == nil && len(v) == 1 && len(up) == 1 && up[0].Value == 1 {
			return time.UnixMilli(int64(math.Round(v[0].Value * 1000)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.t.Fatalf("prometheus never scraped %s", addr)
	return time.Time{}
}

// Sample is one series' value of an instant query.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query at time at (zero: now).
func (p *Prometheus) Query(q string, at time.Time) ([]Sample, error) {
	v := url.Values{"query": {q}}
	if !at.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query?"+v.Encode(), &out); err != nil {
		return nil, err
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, out.Error)
	}
	var res []Sample
	for _, r := range out.Data.Result {
		s, _ := r.Value[1].(string)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %q: %w", q, s, err)
		}
		res = append(res, Sample{Metric: r.Metric, Value: f})
	}
	return res, nil
}

// One runs an instant query that must give exactly one series.
func (p *Prometheus) One(q string, at time.Time) float64 {
	p.t.Helper()
	v, err := p.Query(q, at)
	if err != nil {
		p.t.Fatal(err)
	}
	if len(v) != 1 {
		p.t.Fatalf("query %s: %d series, want 1: %v", q, len(v), v)
	}
	return v[0].Value
}

// Series is one series of a range query.
type Series struct {
	Metric map[string]string
	Points []Point
}

// Point is a sample of a range query.
type Point struct {
	T time.Time
	V float64
}

// Range runs a range query from start to end at step.
func (p *Prometheus) Range(q string, start, end time.Time, step time.Duration) ([]Series, error) {
	f := func(t time.Time) string { return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64) }
	v := url.Values{"query": {q}, "start": {f(start)}, "end": {f(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', 3, 64)}}
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get("/api/v1/query_range?"+v.Encode(), &out); err != nil {
		return nil, err
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, out.Error)
	}
	var res []Series
	for _, r := range out.Data.Result {
		s := Series{Metric: r.Metric}
		for _, pv := range r.Values {
			ts, _ := pv[0].(float64)
			vs, _ := pv[1].(string)
			fv, err := strconv.ParseFloat(vs, 64)
			if err != nil {
				return nil, err
			}
			s.Points = append(s.Points, Point{T: time.Unix(0, int64(ts*1e9)), V: fv})
		}
		res = append(res, s)
	}
	return res, nil
}

func (p *Prometheus) get(path string, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(bufio.NewReader(resp.Body)).Decode(out)
}
