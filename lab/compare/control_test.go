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

// Between two runs on one machine that drifted, the proxy's 2xx/s moved
// 40% and its round's control with it: relative to the control nothing
// changed, and compare says so in its basis. The same drift with a steady
// control is a difference.
func TestCompareVsControl(t *testing.T) {
	row := "sustained/nginx-stock/p256/1cpu"
	a := withVs(t, labDir(t, 10000, 2000, 0.5, []float64{5000, 5100, 4950}), 0.50, 0.51, 0.495)
	b := withVs(t, labDir(t, 10000, 2000, 0.5, []float64{7000, 7100, 6950}), 0.50, 0.507, 0.496)
	rep, err := Compare(load(t, a), load(t, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := metric(t, rep, row, Rate)
	if r.Verdict != Noise || r.Basis != BasisControl || !strings.Contains(r.BasisWords, "relative to each round's control") || r.A != 5000 || r.B != 7000 {
		t.Fatalf("drift with the control: %+v", r)
	}
	c := withVs(t, labDir(t, 10000, 2000, 0.5, []float64{7000, 7100, 6950}), 0.70, 0.71, 0.695)
	rep, _ = Compare(load(t, a), load(t, c), Options{})
	if r := metric(t, rep, row, Rate); r.Verdict != Faster || r.Basis != BasisControl {
		t.Fatalf("a change beyond the control: %+v", r)
	}
	// without vs_control on one side: the runs' own values, as before
	plain := labDir(t, 10000, 2000, 0.5, []float64{7000, 7100, 6950})
	rep, _ = Compare(load(t, a), load(t, plain), Options{})
	if r := metric(t, rep, row, Rate); r.Basis == BasisControl || r.Verdict != Faster {
		t.Fatalf("one side without vs_control: %+v", r)
	}
}
