package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/watch"
)

func TestSpectrum(t *testing.T) {
	if Spectrum(nil) != nil {
		t.Fatal("nil histogram")
	}
	h := hdr.New(1, 60_000_000, 3)
	for i := int64(1); i <= 100_000; i++ {
		h.RecordValue(i) // 1..100000 µs, uniform
	}
	sp := Spectrum(h)
	if sp[0].P != 0 || sp[len(sp)-1].P != 100 || sp[len(sp)-1].Us != h.Max() {
		t.Fatalf("ends %v %v", sp[0], sp[len(sp)-1])
	}
	var have50, have99, have999 bool
	for i, pt := range sp {
		if i > 0 && (pt.P <= sp[i-1].P || pt.Us < sp[i-1].Us) {
			t.Fatalf("not increasing at %d: %v after %v", i, pt, sp[i-1])
		}
		switch pt.P {
		case 50:
			have50 = true
			if pt.Us < 49_900 || pt.Us > 50_100 {
				t.Fatalf("p50 %d", pt.Us)
			}
		case 99:
			have99 = true
		case 99.9:
			have999 = true
			if pt.Us < 99_800 || pt.Us > 100_000 {
				t.Fatalf("p99.9 %d", pt.Us)
			}
		}
	}
	if !have50 || !have99 || !have999 {
		t.Fatalf("missing p50/p99/p99.9 in %v", sp)
	}
	// 100,000 values resolve to 1/(1-p) = 100,000: p99.999
	if last := sp[len(sp)-2].P; last != 99.999 {
		t.Fatalf("finest percentile %v", last)
	}
}

func TestSummarize(t *testing.T) {
	ws := []watch.Sample{
		{T: 1 * time.Second, CPUCores: 0.1, MemCurrent: 10, TimeWait: 5},
		{T: 2 * time.Second, CPUCores: 0.5, MemCurrent: 30, TimeWait: 100},
		{T: 3 * time.Second, CPUCores: 0.7, MemCurrent: 50, TimeWait: 80},
	}
	s := Summarize(FromWatch(ws), 2)
	if s.Samples != 2 || s.CPUAvg != 0.6 || s.CPUMax != 0.7 || s.MemAvg != 40 || s.MemMax != 50 || s.TimeWaitMax != 100 {
		t.Fatalf("%+v", s)
	}
	if s := Summarize(FromWatch(ws), 10); s.Samples != 3 {
		t.Fatalf("discard beyond the samples must fall back to all: %+v", s)
	}
	if s := Summarize(nil, 0); s.Samples != 0 || s.TimeWaitMax != -1 {
		t.Fatalf("%+v", s)
	}
}

func testPlan(t *testing.T) *plan.Plan {
	t.Helper()
	p, err := plan.Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStoreResume(t *testing.T) {
	dir := t.TempDir()
	p := testPlan(t)
	s, resumed, err := Open(dir, p, RunOptions{})
	if err != nil || resumed {
		t.Fatalf("open: %v resumed %v", err, resumed)
	}
	// a second writer is refused while the first holds the lock
	if _, _, err := Open(dir, p, RunOptions{}); err == nil || !strings.Contains(err.Error(), "another") {
		t.Fatalf("second open: %v", err)
	}
	err = s.Update(func(f *File) {
		f.Units = append(f.Units, &Unit{ID: "u1", Status: StatusRunning, Steps: []*Step{{Seq: 1, Phase: "probe", Rate: 100, Verdict: "pass",
			Result: &result.Result{OK: 5, PerSecond: []result.PerSecond{{T: 0, OK: 5}}}}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2, resumed, err := Open(dir, testPlan(t), RunOptions{})
	if err != nil || !resumed {
		t.Fatalf("reopen: %v resumed %v", err, resumed)
	}
	u := s2.F.Unit("u1")
	if u == nil || len(u.Steps) != 1 || u.Steps[0].Result.OK != 5 || len(u.Steps[0].Result.PerSecond) != 1 {
		t.Fatalf("unit after reload: %+v", u)
	}
	s2.Close()

	// other settings: refused, the file is left alone
	q := testPlan(t)
	q.Profiles = q.Profiles[:1]
	if _, _, err := Open(dir, q, RunOptions{}); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Fatalf("other plan: %v", err)
	}
	if _, _, err := Open(dir, testPlan(t), RunOptions{NoCgroups: true}); err == nil {
		t.Fatal("other options accepted")
	}
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "lab run") {
		t.Fatalf("missing: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("{not json"), 0o644)
	if _, err := Load(dir); err == nil {
		t.Fatal("bad json accepted")
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"version": 99}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("version: %v", err)
	}
	if _, _, err := Open(dir, testPlan(t), RunOptions{}); err == nil {
		t.Fatal("open over a bad results file must fail, not overwrite it")
	}
}

func TestConnsPerRequest(t *testing.T) {
	if v := (BackendDelta{Accepted: 100, Requests: 100, Valid: true}).ConnsPerRequest(); v != 1 {
		t.Fatal(v)
	}
	if v := (BackendDelta{Accepted: 1, Requests: 0, Valid: true}).ConnsPerRequest(); v != -1 {
		t.Fatal(v)
	}
	if v := (BackendDelta{Accepted: 1, Requests: 5}).ConnsPerRequest(); v != -1 {
		t.Fatal(v)
	}
}

func TestMachinePorts(t *testing.T) {
	if n := (Machine{PortRange: [2]int{32768, 60999}}).Ports(); n != 28232 {
		t.Fatal(n)
	}
	if n := (Machine{}).Ports(); n != 0 {
		t.Fatal(n)
	}
}

// A search unit with no search left (its only round set aside to be
// measured again, and that run cut short) has no round value: the
// partial report of such a run rendered into a panic.
func TestRoundValueWithoutSearches(t *testing.T) {
	f := &File{Plan: &plan.Plan{Scenarios: []plan.Scenario{{Name: "keepalive-1k", Runs: 1}}}}
	u := &Unit{Scenario: "keepalive-1k", Method: plan.MethodSearch, Remeasured: []Remeasured{{Round: 1}}}
	for k := 1; k <= 3; k++ {
		if v, metric, ok := f.RoundValue(u, k); ok || v != 0 || metric != VsRate {
			t.Fatalf("round %d: %v %q %v, want no value", k, v, metric, ok)
		}
	}
}
