package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
)

// withVs rewrites results directory dir's closed-loop unit with per-round
// values over their controls.
func withVs(t *testing.T, dir string, vs ...float64) string {
	t.Helper()
	f, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	u := f.Unit("sustained/nginx-stock/p256/1cpu")
	u.VsControl = &results.VsControl{Metric: results.VsRate, Rounds: vs}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(filepath.Join(dir, results.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// vs_control is shown beside a row's rate, not judged: two runs whose
// proxies' rates are alike are within noise whatever their controls did
// (on this machine the control moved 30% between two runs while the
// proxies moved -11% to +8%), and a 40% change is a difference.
func TestCompareVsControl(t *testing.T) {
	row := "sustained/nginx-stock/p256/1cpu"
	a := withVs(t, labDir(t, 10000, 2000, 0.5, []float64{5000, 5100, 4950}), 0.09, 0.091, 0.0895)
	b := withVs(t, labDir(t, 10000, 2000, 0.5, []float64{5050, 5150, 4990}), 0.070, 0.071, 0.0695)
	rep, err := Compare(load(t, a), load(t, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := metric(t, rep, row, Rate)
	if r.Verdict != Noise || !strings.Contains(r.BasisWords, "over each round's control (vs_control, shown, not judged): A 0.09 (0.0895–0.091), B 0.07 (0.0695–0.071)") {
		t.Fatalf("alike rates, controls apart: %+v", r)
	}
	c := withVs(t, labDir(t, 10000, 2000, 0.5, []float64{7000, 7100, 6950}), 0.09, 0.091, 0.0895)
	rep, _ = Compare(load(t, a), load(t, c), Options{})
	if r := metric(t, rep, row, Rate); r.Verdict != Faster {
		t.Fatalf("40%% faster: %+v", r)
	}
}

// A fixed-rate row whose rate was derived in the run (rate_from) is keyed
// by its share of the source's rate found, so two runs that derived other
// rates compare it.
func TestCompareRateFromRows(t *testing.T) {
	mk := func(rate float64) string {
		dir := labDir(t, 10000, 2000, 0.5, []float64{5000})
		f, err := results.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		u := &results.Unit{ID: "cpu-cpuset/nginx-stock/p256/1cpu", Scenario: "keepalive-1k", Method: "fixed", Status: results.StatusDone,
			RateFrom: &results.RateFrom{Unit: "keepalive-1k/nginx-stock/p256/1cpu", Found: rate / 0.9, Share: 0.9, Rate: rate}}
		st := *f.Units[1].Steps[0]
		st.Rate = rate
		u.Steps = []*results.Step{&st}
		f.Units = append(f.Units, u)
		b, _ := json.Marshal(f)
		if err := os.WriteFile(filepath.Join(dir, results.FileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	rep, err := Compare(load(t, mk(6300)), load(t, mk(5900)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := "cpu-cpuset/nginx-stock/p256/1cpu @ 90% of keepalive-1k/nginx-stock/p256/1cpu's rate found"
	// at other offered rates nothing is judged: the 2xx/s differ because
	// the rates offered did
	for _, m := range []Metric{Rate, P99, CPU} {
		if r := metric(t, rep, row, m); r.Verdict != Other || !strings.Contains(r.BasisWords, "each side offered the rate its own run derived (6,300 vs 5,900 req/s)") {
			t.Fatalf("%s: %+v", m, r)
		}
	}
	if _, _, only := rep.Summary(); only != 0 {
		t.Fatalf("%d rows on one side only", only)
	}
	// the same derived rate on both sides is compared as usual
	rep, _ = Compare(load(t, mk(6300)), load(t, mk(6300)), Options{})
	if r := metric(t, rep, row, Rate); r.Verdict != Noise {
		t.Fatalf("same derived rate: %+v", r)
	}
}
