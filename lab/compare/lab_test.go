package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

const labPlan = `
name: t
profiles: [nginx-stock]
search: {precision: 0.15}
scenarios:
  - kind: keepalive-1k
  - kind: sustained
    duration: 10s
`

// labTestPlan is labPlan, parsed and checked.
func labTestPlan(t *testing.T) *plan.Plan {
	t.Helper()
	p, err := plan.Parse([]byte(labPlan))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeLab writes f as a results directory and returns it.
func writeLab(t *testing.T, f *results.File) string {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(f)
	if err := os.WriteFile(filepath.Join(dir, results.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// labDir writes a results directory: a search that found rate (its
// confirmation at p50 lat µs, proxy CPU cpu), and a closed-loop unit with
// one run per value of closed.
func labDir(t *testing.T, rate float64, lat int64, cpu float64, closed []float64) string {
	t.Helper()
	p := labTestPlan(t)
	step := func(ok uint64, lat int64, phase string, rate float64, run int) *results.Step {
		st := &results.Step{Phase: phase, Rate: rate, Run: run, Verdict: string(search.Pass), Result: mkResult(t, repeat(ok, 8), repeat(lat, 8))}
		for i := 0; i < 8; i++ {
			st.Proxy = append(st.Proxy, results.ProxySample{T: float64(i + 1), CPU: cpu * (1 + 0.01*float64(i%3)), MemAnon: 8 << 20, MemKernel: 1 << 20})
		}
		st.ProxySum = results.Summarize(st.Proxy, 1)
		return st
	}
	f := &results.File{Version: results.Version, Plan: p, Finished: true}
	f.Units = append(f.Units, &results.Unit{ID: "keepalive-1k/nginx-stock/p256/1cpu", Scenario: "keepalive-1k", Method: plan.MethodSearch, Status: results.StatusDone,
		Search: &search.Result{Rate: rate, Confirmed: true},
		Steps:  []*results.Step{step(uint64(rate), lat, string(search.PhaseConfirm), rate, 0)}})
	u := &results.Unit{ID: "sustained/nginx-stock/p256/1cpu", Scenario: "sustained", Method: plan.MethodClosed, Status: results.StatusDone}
	for i, v := range closed {
		u.Steps = append(u.Steps, step(uint64(v), 2000, results.PhaseRun, 0, i+1))
	}
	f.Units = append(f.Units, u)
	return writeLab(t, f)
}

func TestLabDirectories(t *testing.T) {
	a := labDir(t, 10000, 2000, 0.5, []float64{5000})
	near := labDir(t, 11000, 2000, 0.5, []float64{5100}) // 10% above: within the 15% precision
	far := labDir(t, 13000, 4000, 0.9, []float64{7000})  // 30% above, twice the latency, more CPU
	rep, err := Compare(load(t, a), load(t, near), Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := "keepalive-1k/nginx-stock/p256/1cpu"
	if r := metric(t, rep, row, Rate); r.Verdict != Noise || r.Basis != BasisValues || r.Floor != 0.15 || !strings.Contains(r.BasisWords, "precision") {
		t.Fatalf("search 10%% apart: %+v", r)
	}
	if compared, quiet, _ := rep.Summary(); compared != 2 || quiet != 2 {
		t.Fatalf("summary %d %d: %+v", compared, quiet, rep.Rows)
	}
	rep, _ = Compare(load(t, a), load(t, far), Options{})
	// the confirmations ran at different rates: their latency, CPU and
	// memory are shown, not judged
	for m, want := range map[Metric]string{Rate: Faster, P50: Other, CPU: Other, Mem: Other} {
		if r := metric(t, rep, row, m); r.Verdict != want {
			t.Fatalf("%s: %+v, want %s", m, r, want)
		}
	}
	// at the same rate found they are measured at the boundary: shown,
	// not judged (the old code called this p50 slower and the CPU higher)
	same := labDir(t, 10000, 4000, 0.9, []float64{5000})
	rep2, _ := Compare(load(t, a), load(t, same), Options{})
	for m, want := range map[Metric]string{Rate: Noise, P50: Boundary, CPU: Boundary, Mem: Boundary} {
		if r := metric(t, rep2, row, m); r.Verdict != want {
			t.Fatalf("same rate, %s: %+v, want %s", m, r, want)
		}
	}
	if r := metric(t, rep, "sustained/nginx-stock/p256/1cpu", Rate); r.Verdict != Faster || r.Basis != BasisPerSecond {
		t.Fatalf("closed loop 40%% above: %+v", r)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 rows compared: 0 within noise on every metric, 2 with a difference.", row + ": 2xx/s faster: 10,000 → 13,000, ratio 1.300", "at other rates"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	// Repeated lab runs add up: 2 directories a side, 2 runs each.
	rep, _ = Compare(load(t, a+","+near), load(t, far+","+far), Options{})
	if r := metric(t, rep, row, Rate); r.RunsA != 2 || r.RunsB != 2 || r.Verdict != Faster {
		t.Fatalf("2+2 searches: %+v", r)
	}
	// A gen result against a lab directory is refused.
	g := writeResult(t, t.TempDir(), "g.json", mkResult(t, []uint64{1, 1, 1, 1}, []int64{1, 1, 1, 1}))
	if _, err := Compare(load(t, a), load(t, g), Options{}); err == nil || !IsInput(err) {
		t.Fatalf("lab vs gen: %v", err)
	}
	if _, err := Load(a + "," + g); err == nil || !strings.Contains(err.Error(), "one kind") {
		t.Fatalf("mixed side: %v", err)
	}
}

// searchDir writes a results directory with one search: its steps as
// (phase, rate, pass, p50 µs), and the rate it found.
func searchDir(t *testing.T, found float64, steps ...any) string {
	t.Helper()
	p := labTestPlan(t)
	u := &results.Unit{ID: "keepalive-1k/nginx-stock/p256/1cpu", Scenario: "keepalive-1k", Method: plan.MethodSearch, Status: results.StatusDone,
		Search: &search.Result{Rate: found, Confirmed: true}}
	for i := 0; i+3 < len(steps); i += 4 {
		v := string(search.Fail)
		if steps[i+2].(bool) {
			v = string(search.Pass)
		}
		rate := steps[i+1].(float64)
		u.Steps = append(u.Steps, &results.Step{Phase: steps[i].(string), Rate: rate, Verdict: v,
			Result: mkResult(t, repeat(uint64(rate), 6), repeat(int64(steps[i+3].(int)), 6))})
	}
	f := &results.File{Version: results.Version, Plan: p, Finished: true, Units: []*results.Unit{u}}
	return writeLab(t, f)
}

// Two searches of one proxy in two make lab runs (quick-2 and quick-3 of
// this machine): the first found 2,500 cleanly; the second passed 2,500
// in its bisection, failed it in its confirmation and stepped down to
// 1,947. Their steps disagree between 1,947 and 2,500, so the boundary is
// somewhere in 1,947–2,750 and the 0.78 ratio is within noise; the same
// 1,947 from a search whose steps all agree ([1,947, 2,116]) is slower.
func TestSearchBrackets(t *testing.T) {
	clean := searchDir(t, 2500,
		"probe", 2000.0, true, 900, "bisect", 2500.0, true, 1000, "bisect", 2750.0, false, 90000, "confirm", 2500.0, true, 1100)
	flipped := searchDir(t, 1947,
		"probe", 2000.0, true, 900, "bisect", 2500.0, true, 1000, "bisect", 2750.0, false, 90000,
		"confirm", 2500.0, false, 80000, "confirm", 2300.0, false, 60000, "confirm", 2116.0, false, 50000, "confirm", 1947.0, true, 1200)
	lower := searchDir(t, 1947,
		"probe", 1000.0, true, 900, "bisect", 1947.0, true, 1000, "bisect", 2116.0, false, 90000, "confirm", 1947.0, true, 1200)
	row := "keepalive-1k/nginx-stock/p256/1cpu"
	rep, err := Compare(load(t, clean), load(t, flipped), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := metric(t, rep, row, Rate); r.Verdict != Noise || !strings.Contains(r.BasisWords, "A 2,500–2,750, B 1,947–2,750") {
		t.Fatalf("disagreeing steps: %+v", r)
	}
	rep, _ = Compare(load(t, clean), load(t, lower), Options{})
	if r := metric(t, rep, row, Rate); r.Verdict != Slower || !strings.Contains(r.BasisWords, "B 1,947–2,116") {
		t.Fatalf("agreeing steps, 22%% lower: %+v", r)
	}
	// At one rate found, the searches' own repeats state the swing.
	swung := searchDir(t, 2500,
		"bisect", 2500.0, true, 20000, "bisect", 2750.0, false, 90000, "confirm", 2500.0, true, 1000)
	rep, _ = Compare(load(t, clean), load(t, swung), Options{})
	if r := metric(t, rep, row, P50); r.Verdict != Boundary || r.Different || !strings.Contains(r.BasisWords, "differed up to 20") {
		t.Fatalf("p50 at the boundary: %+v", r)
	}
}
