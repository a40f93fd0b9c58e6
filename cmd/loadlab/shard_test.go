package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
)

func loadResult(t *testing.T, path string) *result.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

// TestShardsMergeLikeOneRun: four loadlab gen processes, --shard i/4 with
// one --start-at 1 s ahead, open loop against the built-in backend (what loadlab
// serve runs) answering after 5 ms, merged with loadlab merge, give what one
// generator gives: every request of the schedule once, in the seconds it
// was due, and the corrected p99 of a single run against the same server
// (run at the same time, so that both see the same machine). The start
// time is one absolute time, as docs/sharded.md tells users: "+1s" would give
// each process its own start, as far apart as the launches (up to 200 ms
// on this machine under load, measured), which merge accepts and reports
// but which is not the exact schedule.
func TestShardsMergeLikeOneRun(t *testing.T) {
	srv := startBackend(t)
	url := "http://" + srv.Addr() + "/delay/5ms"
	const rate, secs = 1000, 4
	start := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	common := []string{"-q", "-r", fmt.Sprint(rate), "-d", fmt.Sprintf("%ds", secs), "-c", "40", "--timeout", "5s", "--start-at", start}
	dir := t.TempDir()

	single := filepath.Join(dir, "single.json")
	var files []string
	var cmds []*exec.Cmd
	var errs []*strings.Builder
	for i := -1; i < 4; i++ {
		args := []string{"gen", "--json", single}
		if i >= 0 {
			f := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
			files = append(files, f)
			args = []string{"gen", "--shard", fmt.Sprintf("%d/4", i), "--json", f}
		}
		cmd := cliCommand(t, append(append(args, common...), url)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, errs = append(cmds, cmd), append(errs, &stderr)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("gen %v: %v: %s", cmd.Args[1:4], err, errs[i])
		}
	}
	merged := filepath.Join(dir, "merged.json")
	if code, _, stderr := runCLI(t, append([]string{"merge", "-q", "--json", merged}, files...)...); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	m, one := loadResult(t, merged), loadResult(t, single)

	// Every request the schedule owed: 4 s at 1,000/s, each shard its
	// quarter.
	const want = rate * secs
	if m.Requests < want*99/100 || m.Requests > want*101/100 || one.Requests != m.Requests {
		t.Fatalf("merged requests %d, single run %d, want %d ± 1%%", m.Requests, one.Requests, want)
	}
	for i, f := range files {
		if r := loadResult(t, f); r.Requests != want/4 || r.Shard == nil || r.Shard.Index != i || r.Connections != 10 {
			t.Errorf("shard %d: requests %d, shard %+v, connections %d; want %d, %d/4, 10", i, r.Requests, r.Shard, r.Connections, want/4, i)
		}
	}
	// The per-second series, aligned by wall clock, count outcomes by
	// when they ended. A request ends no earlier than it was due and no
	// later than the largest latency after, so by the end of second t
	// between rate x (t+1 - max latency) and rate x (t+1) have ended: a
	// shard sent twice breaks the upper bound, a gap in the schedule the
	// lower one. The entries hold every outcome once.
	maxLat := float64(m.Latency.Max) / 1e6
	var cum uint64
	for _, s := range m.Seconds {
		cum += s.OK + s.Non2xx + s.Errors
		if s.T >= secs {
			continue
		}
		hi, lo := float64(rate*(s.T+1)), float64(rate)*(float64(s.T+1)-maxLat)-1
		if float64(cum) > hi || float64(cum) < lo {
			t.Errorf("by the end of second %d: %d outcomes, want between %.0f and %.0f (max latency %.3f s)", s.T, cum, lo, hi, maxLat)
		}
	}
	if cum != m.Requests {
		t.Errorf("per-second outcomes add up to %d, requests %d", cum, m.Requests)
	}
	if m.Schedule == nil || m.Schedule.Shards != 4 || len(m.Shards) != 4 || m.Schedule.StartSkewMs != 0 ||
		m.Schedule.Start.Format(time.RFC3339Nano) != start || !one.Schedule.Start.Equal(m.Schedule.Start) {
		t.Fatalf("merged schedule %+v, %d shards; single run's %+v; want all to start at %s", m.Schedule, len(m.Shards), one.Schedule, start)
	}
	// The corrected p99: the server's 5 ms is a floor for both. The
	// precision of a single run's p99 is estimated from the single run
	// itself, as the difference between the p99 of its even and of its
	// odd seconds; the merged p99 must be within twice that (and 1 ms) of
	// the single run's.
	p, q := m.Latency.P99, one.Latency.P99
	if p < 5000 || q < 5000 {
		t.Fatalf("p99 merged %d µs, single %d µs: below the server's 5 ms", p, q)
	}
	halves := [2]*hdr.Histogram{hdr.New(1, 60_000_000, 3), hdr.New(1, 60_000_000, 3)}
	for _, s := range one.Seconds {
		h, err := result.DecodeHist(s.Hist)
		if err != nil || h == nil {
			t.Fatalf("single run second %d: %v", s.T, err)
		}
		halves[s.T%2].Merge(h)
	}
	spread := halves[0].ValueAtQuantile(99) - halves[1].ValueAtQuantile(99)
	if spread < 0 {
		spread = -spread
	}
	bound := 2*spread + 1000
	if d := p - q; d < -bound || d > bound {
		t.Fatalf("p99 merged %d µs, single run %d µs: apart by more than %d µs (twice the single run's half-to-half spread %d µs, + 1 ms)", p, q, bound, spread)
	}
	t.Logf("requests %d, p99 merged %d µs, single %d µs (halves %d / %d µs), start skew %.3f ms",
		m.Requests, p, q, halves[0].ValueAtQuantile(99), halves[1].ValueAtQuantile(99), m.Schedule.StartSkewMs)
}

// TestShardBadInput: bad shard and start-time input is one line and exit 2.
func TestShardBadInput(t *testing.T) {
	url := "http://127.0.0.1:1/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "4/4"}, "outside 0..3"},
		{[]string{"--shard", "1"}, "INDEX/COUNT"},
		{[]string{"--shard", "0/4", "-c", "3"}, "3 connections cannot be split over 4 shards"},
		{[]string{"--start-at", "2020-01-01T00:00:00Z"}, "in the past"},
		{[]string{"--start-at", "tomorrow"}, "RFC 3339"},
		{[]string{"--start-at", "+-1s"}, "+DURATION"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"gen"}, c.args...), url)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("gen %v: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
}

// TestShardInterruptedBeforeStart: SIGINT while a run waits for its start
// time ends it at once, exit 130, with no result written.
func TestShardInterruptedBeforeStart(t *testing.T) {
	srv := startBackend(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := cliCommand(t, "gen", "-q", "--start-at", "+30s", "-r", "100", "-d", "1s", "--json", out, "http://"+srv.Addr()+"/1k")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The probe connection comes after the signal handling is set up and
	// before the wait.
	for deadline := time.Now().Add(30 * time.Second); srv.Stats().Accepted == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("gen never probed the target: %s", stderr.String())
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("still waiting for the start time 5 s after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "interrupted before the start time") {
		t.Fatalf("exit %d, stderr %q; want 130 and the reason", code, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a result was written for a run that never started: %v", err)
	}
}
