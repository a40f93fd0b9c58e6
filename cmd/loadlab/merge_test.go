package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
)

// shardResult returns shard i of n of a made-up open-loop run whose
// requests all took 100+i µs (so the merged histogram is known).
func shardResult(t *testing.T, i, n int) *result.Result {
	t.Helper()
	h := hdr.New(1, 60_000_000, 3)
	for k := 0; k < 100; k++ {
		h.RecordValue(int64(100 + i))
	}
	enc, err := result.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	r := &result.Result{Target: "http://127.0.0.1:8080/", Protocol: "http/1.1", Mode: "open", Connections: 1,
		DurationS: 1, RequestedRate: 100.0 / float64(n), AchievedRate: 100, Requests: 100, OK: 100,
		Status: map[string]uint64{"200": 100}, Errors: map[string]uint64{}, Generator: result.Generator{CPUs: []int{0}, Loops: 1, Busy: []float64{0.1}}}
	r.Shard = &result.ShardInfo{Index: i, Count: n}
	r.Host = fmt.Sprintf("node-%d", i)
	r.Schedule = &result.ScheduleInfo{Start: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Rate: 100, DurationS: 1, Connections: n, Shards: n}
	r.Histograms = &result.EncodedHistograms{Corrected: enc, OK: enc, Uncorrected: enc}
	r.Seconds = []result.Second{{T: 0, OK: 100, Hist: enc}}
	return r
}

func writeResult(t *testing.T, path string, rs ...*result.Result) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range rs {
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestMergeCLI(t *testing.T) {
	dir := t.TempDir()
	var all []*result.Result
	for i := 0; i < 4; i++ {
		all = append(all, shardResult(t, i, 4))
	}
	logs := writeResult(t, filepath.Join(dir, "shards.jsonl"), all[2], all[0], all[3], all[1])
	out := filepath.Join(dir, "run.json")
	code, stdout, stderr := runCLI(t, "merge", logs, "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"merged 4 shards", "node-3", "requests  400, ok 400"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m result.Result
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// 100 values each of 100, 101, 102, 103 µs.
	if m.Requests != 400 || m.Latency.P50 != 101 || m.Latency.Max != 103 || m.RequestedRate != 100 || len(m.Shards) != 4 || m.Histograms == nil {
		t.Fatalf("merged %+v", m)
	}
	// Separate files, and - for standard input.
	var files []string
	for i, r := range all[:3] {
		files = append(files, writeResult(t, filepath.Join(dir, fmt.Sprintf("s%d.json", i)), r))
	}
	cmd := cliCommand(t, append([]string{"merge", "-q", "--json", "-", "-"}, files...)...)
	stdin, _ := os.Open(writeResult(t, filepath.Join(dir, "s3.json"), all[3]))
	defer stdin.Close()
	cmd.Stdin = stdin
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("merge from stdin: %v", err)
	}
	if err := json.Unmarshal(got, &m); err != nil || m.Requests != 400 {
		t.Fatalf("merge from stdin: %v, %d requests", err, m.Requests)
	}
}

// TestMergeCLIRefuses: bad merges end with a one-line reason and exit 2.
func TestMergeCLIRefuses(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, edit func(r *result.Result), i, n int) string {
		r := shardResult(t, i, n)
		if edit != nil {
			edit(r)
		}
		return writeResult(t, filepath.Join(dir, name), r)
	}
	s0, s1 := file("s0.json", nil, 0, 2), file("s1.json", nil, 1, 2)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{s0, file("dup.json", nil, 0, 2)}, "both hold shard 0/2"},
		{[]string{s0, file("of3.json", nil, 1, 3)}, "shard count 2 vs 3"},
		{[]string{s0, file("closed.json", func(r *result.Result) { r.Mode = "closed" }, 1, 2)}, "mode open loop vs closed loop"},
		{[]string{s0}, "shard 1/2 missing"},
		{[]string{s0, filepath.Join(dir, "nope.json")}, "no such file"},
		{[]string{s0, writeFile(t, filepath.Join(dir, "failed.log"), "loadlab: start time 2026-05-01T12:00:00Z is 3s in the past\n")}, `failed.log:1: not a gen result: "loadlab: start time`},
		{nil, "at least one FILE"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, append([]string{"merge"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("merge %v: exit %d, stderr %q; want exit 2 and one line containing %q", c.args, code, stderr, c.want)
		}
	}
	if code, _, stderr := runCLI(t, "merge", "--partial", s1); code != 0 {
		t.Errorf("--partial: exit %d: %s", code, stderr)
	}
}

func writeFile(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMergeThreshold: merge --threshold checks the merged result (every
// request took 100-103 µs) and exits 3 when one fails, the result still
// written with each threshold's outcome.
func TestMergeThreshold(t *testing.T) {
	dir := t.TempDir()
	var all []*result.Result
	for i := 0; i < 4; i++ {
		all = append(all, shardResult(t, i, 4))
	}
	logs := writeResult(t, filepath.Join(dir, "shards.jsonl"), all...)
	for _, tc := range []struct {
		args []string
		code int
		pass []bool
	}{
		{[]string{"--threshold", "p99<1ms", "--threshold", "errors<=0"}, exitOK, []bool{true, true}},
		{[]string{"--threshold", "p99<1ms", "--threshold", "p50<100us"}, exitThreshold, []bool{true, false}},
	} {
		out := filepath.Join(dir, "run.json")
		code, _, stderr := runCLI(t, append([]string{"merge", logs, "-q", "--json", out}, tc.args...)...)
		if code != tc.code {
			t.Fatalf("%v: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
		res := loadResult(t, out)
		if len(res.Thresholds) != len(tc.pass) {
			t.Fatalf("%v: thresholds %+v", tc.args, res.Thresholds)
		}
		for i, th := range res.Thresholds {
			if th.Pass != tc.pass[i] {
				t.Errorf("%s: pass %v (value %v), want %v", th.Threshold, th.Pass, th.Value, tc.pass[i])
			}
		}
	}
	if code, _, stderr := runCLI(t, "merge", logs, "-q", "--threshold", "p98<1ms"); code != exitUsage || !strings.Contains(stderr, "unknown metric") {
		t.Errorf("bad threshold: exit %d, %s", code, stderr)
	}
}
