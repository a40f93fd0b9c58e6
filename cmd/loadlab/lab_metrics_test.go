package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/promtest"
	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/lab/results"
)

// TestLabRunMetricsInPrometheus: a real lab run of a tiny plan (two
// nginx profiles, one fixed-rate step each), scraped every second by a
// real Prometheus. The step info series name each step's scenario and
// profile in the order results.json ran them, and every scraped value of
// the proxy's memory.current during a step is one of the values that
// step recorded, scraped within the step's time.
func TestLabRunMetricsInPrometheus(t *testing.T) {
	t.Parallel() // beside TestGenMetricsInPrometheus
	needNginxRoot(t)
	dir := worldDir(t)
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(`name: metrics
profiles: [nginx-stock, nginx-keepalive]
keys: [p256]
net: netns
cpus: {server: "1"}
timeout: 5s
idle_memory: {quiet: 0s, samples: 0, every: 0s}
scenarios:
  - kind: fixed-rate
    rates: [300]
    runs: 1
    duration: 5s
    warmup: 1s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	// Prometheus scrapes the address before the run binds it (a port
	// that was free a moment ago: another process taking it first makes
	// the run fail to bind, and the test tries another), so its first
	// scrape comes within a second of the bind, and the first step only
	// after the lab session is up, seconds later.
	var (
		prom     *promtest.Prometheus
		progress *lineWatcher
		done     chan error
		addr     string
	)
	for attempt := 0; ; attempt++ {
		addr = "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
		prom = promtest.Start(t, addr)
		prom.Scraping(addr)
		cmd := cliCommand(t, "lab", "run", "--plan", planFile, "--out", out, "-q", "--metrics-addr", addr, "--metrics-linger", "3s", "--metrics-label", "run=labtest")
		progress, done = startUntil(t, cmd, "loadlab: ")
		if !strings.Contains(progress.text(), "address already in use") || attempt == 3 {
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					<-done
				}
			})
			break
		}
		<-done
	}
	first := prom.FirstScrape(addr)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("lab run: %v\n%s", err, progress.text())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("lab run did not end within 3 minutes:\n%s", progress.text())
	}
	end := time.Now()
	f, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	type stepAt struct {
		profile, scenario string
		st                *results.Step
	}
	var steps []stepAt
	for _, u := range f.Units {
		for i := range u.Steps {
			steps = append(steps, stepAt{u.Profile, u.Scenario, u.Steps[i]})
		}
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].st.Started.Before(steps[j].st.Started) })
	if len(steps) != 2 {
		t.Fatalf("%d steps recorded, want 2", len(steps))
	}

	info, err := prom.Range(`loadlab_lab_step_info{run="labtest"} == 1`, first, end, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		at                time.Time
		profile, scenario string
	}
	var order []seen
	for _, s := range info {
		order = append(order, seen{s.Points[0].T, s.Metric["profile"], s.Metric["scenario"]})
		if s.Metric["plan"] != "metrics" || s.Metric["key"] != "p256" || s.Metric["layout"] == "" {
			t.Errorf("step info labels %v: want plan metrics, key p256 and a layout", s.Metric)
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].at.Before(order[j].at) })
	var got, want []string
	for _, o := range order {
		got = append(got, o.scenario+" on "+o.profile)
	}
	for _, s := range steps {
		want = append(want, s.scenario+" on "+s.profile)
	}
	if !slices.Equal(got, want) {
		t.Errorf("step info series in order %v, results.json ran %v", got, want)
	}

	for _, s := range steps {
		var recorded []float64
		for _, p := range s.st.Proxy {
			recorded = append(recorded, float64(p.Mem))
		}
		from := s.st.Started
		to := from.Add(time.Duration((s.st.Result.DurationS+s.st.Result.WarmupS)*float64(time.Second)) + 3*time.Second)
		mem, err := prom.Range(`loadlab_lab_memory_current_bytes{run="labtest",role="proxy",profile="`+s.profile+`"}`, from, to, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(mem) != 1 || len(mem[0].Points) < 3 {
			t.Fatalf("%s: proxy memory series %v, want one with at least 3 points", s.profile, mem)
		}
		for _, p := range mem[0].Points {
			if !slices.Contains(recorded, p.V) {
				t.Errorf("%s: memory.current %v scraped at %v is none of the step's recorded samples %v", s.profile, p.V, p.T, recorded)
			}
		}
	}
}
