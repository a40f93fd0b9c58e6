package compare

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
)

// mkResult is a gen result of len(lat) measured seconds after one second
// of warmup: in second i, ok[i] 2xx responses, each with latency lat[i] µs
// (so every percentile of that second is lat[i]).
func mkResult(t *testing.T, ok []uint64, lat []int64) *result.Result {
	t.Helper()
	r := &result.Result{Target: "http://127.0.0.1:1/", Mode: "open", WarmupS: 1, DurationS: float64(len(lat))}
	total := hdr.New(1, 60_000_000, 3)
	secs := []result.Second{{T: 0, DurS: 1, OK: 100}} // warmup: left out
	for i := range lat {
		h := hdr.New(1, 60_000_000, 3)
		h.RecordValues(lat[i], int64(ok[i]))
		total.RecordValues(lat[i], int64(ok[i]))
		enc, err := result.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		secs = append(secs, result.Second{T: i + 1, DurS: 1, OK: ok[i], P99us: lat[i], Hist: enc})
		r.OK += ok[i]
	}
	r.Seconds = secs
	r.Requests = r.OK
	r.AchievedRate = float64(r.OK) / r.DurationS
	r.Latency = result.Latency{P50: total.ValueAtQuantile(50), P99: total.ValueAtQuantile(99), P999: total.ValueAtQuantile(99.9)}
	return r
}

// writeResult writes r as gen --json would and returns the path.
func writeResult(t *testing.T, dir, name string, r *result.Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// wobble is n values around v, ±5%, in a fixed order.
func wobble(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.05*math.Sin(float64(7*i+3)))
	}
	return out
}

func ints(xs []float64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

func counts(xs []float64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = uint64(x)
	}
	return out
}

func load(t *testing.T, arg string) *Side {
	t.Helper()
	s, err := Load(arg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func metric(t *testing.T, rep *Report, row string, m Metric) Result {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Key != row {
			continue
		}
		for _, x := range r.Metrics {
			if x.Metric == m {
				return x
			}
		}
	}
	t.Fatalf("no %s of row %s in %+v", m, row, rep.Rows)
	return Result{}
}

// One run each: the per-second values decide, and a difference must
// exceed the floor.
func TestOneRunEach(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "a.json", mkResult(t, counts(wobble(1000, 10)), ints(wobble(20_000, 10))))
	same := writeResult(t, dir, "a2.json", mkResult(t, counts(wobble(1000, 10)[1:]), ints(wobble(20_000, 10)[2:])))
	// 8% slower in every second: significant, not beyond the 10% floor
	near := writeResult(t, dir, "near.json", mkResult(t, counts(wobble(1000, 10)), ints(wobble(21_600, 10))))
	// twice the latency, 30% fewer 2xx/s
	slow := writeResult(t, dir, "slow.json", mkResult(t, counts(wobble(700, 10)), ints(wobble(40_000, 10))))

	rep, err := Compare(load(t, base), load(t, same), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Metric{Rate, P50, P99, P999, Errors} {
		r := metric(t, rep, "run", m)
		if r.Verdict != Noise || r.Basis != BasisPerSecond || r.Floor != DefaultFloor {
			t.Fatalf("same server, %s: %+v", m, r)
		}
	}

	rep, _ = Compare(load(t, base), load(t, near), Options{})
	r := metric(t, rep, "run", P50)
	if r.Verdict != Noise || r.P == nil || *r.P >= 0.05 == true {
		t.Fatalf("8%% slower: want significant but within the floor: %+v", r)
	}
	rep, _ = Compare(load(t, base), load(t, near), Options{Floor: 0.05})
	if r := metric(t, rep, "run", P50); r.Verdict != Slower || !r.Worse {
		t.Fatalf("8%% slower with a 5%% floor: %+v", r)
	}

	rep, _ = Compare(load(t, base), load(t, slow), Options{})
	for m, want := range map[Metric]string{Rate: Slower, P50: Slower, P99: Slower, P999: Slower, Errors: Noise} {
		r := metric(t, rep, "run", m)
		if r.Verdict != want {
			t.Fatalf("slow, %s: %+v, want %s", m, r, want)
		}
		if m == P50 && (r.Ratio == nil || math.Abs(*r.Ratio-2) > 0.05 || r.RatioLo == nil || *r.RatioLo > 2 || *r.RatioHi < 1.8) {
			t.Fatalf("p50 ratio %+v, want about 2 with an interval around it", r)
		}
	}
	rules, err := ParseRules("p99>+10%,rate<-5%")
	if err != nil {
		t.Fatal(err)
	}
	rep.Check(rules)
	if !rep.Failed || !rep.Checks[0].Failed || !rep.Checks[1].Failed {
		t.Fatalf("checks %+v", rep.Checks)
	}
	rep.Check([]Rule{{Metric: P99, Op: ">", Percent: 150, Threshold: 1.5}})
	if rep.Failed {
		t.Fatalf("p99>+150%% fired on a 2x change: %+v", rep.Checks)
	}
}

// Four runs a side: the runs' values decide (no floor); two runs a side
// whose ranges overlap are within noise whatever the seconds say.
func TestRepeatedRuns(t *testing.T) {
	dir := t.TempDir()
	var as, bs []string
	for i, f := range []float64{1.00, 1.02, 0.99, 1.01} {
		as = append(as, writeResult(t, dir, "a"+string(rune('0'+i))+".json", mkResult(t, repeat(uint64(1000), 5), repeat(int64(20_000*f), 5))))
		bs = append(bs, writeResult(t, dir, "b"+string(rune('0'+i))+".json", mkResult(t, repeat(uint64(1000), 5), repeat(int64(21_000*f), 5))))
	}
	rep, err := Compare(load(t, strings.Join(as, ",")), load(t, strings.Join(bs, ",")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The smallest p of 4+4 runs is 2/70 = 0.029: with p50, p99 and p99.9
	// tested (2xx/s and errors are one number on both sides, left out),
	// Holm makes it 0.086: within noise.
	r := metric(t, rep, "run", P50)
	if r.Basis != BasisRuns || r.Verdict != Noise || r.RunsA != 4 || r.P == nil || math.Abs(*r.P-2.0/70) > 1e-9 || r.RatioLo == nil ||
		r.PAdj == nil || math.Abs(*r.PAdj-3*2.0/70) > 1e-9 || rep.Rows[0].Tests != 3 || !strings.Contains(r.BasisWords, "Holm p=0.086 over 3 tests") {
		t.Fatalf("4+4 runs 5%% apart: %+v", r)
	}
	// 6+6 runs: p = 2/924, Holm 3·2/924 = 0.0065: slower.
	for i, f := range []float64{0.985, 1.03} {
		as = append(as, writeResult(t, dir, "a"+string(rune('4'+i))+".json", mkResult(t, repeat(uint64(1000), 5), repeat(int64(20_000*f), 5))))
		bs = append(bs, writeResult(t, dir, "b"+string(rune('4'+i))+".json", mkResult(t, repeat(uint64(1000), 5), repeat(int64(21_000*f), 5))))
	}
	rep, _ = Compare(load(t, strings.Join(as, ",")), load(t, strings.Join(bs, ",")), Options{})
	r = metric(t, rep, "run", P50)
	if r.Basis != BasisRuns || r.Verdict != Slower || r.RunsA != 6 || math.Abs(*r.P-2.0/924) > 1e-9 || math.Abs(*r.PAdj-3*2.0/924) > 1e-9 || !r.DifferentAll {
		t.Fatalf("6+6 runs 5%% apart: %+v", r)
	}
	// 2+2 runs of 20 s: A 20,000 and 20,400 µs, C 20,390 and 20,800 µs in
	// every second. The 80 seconds alone are significant; the runs'
	// ranges overlap: within noise.
	var a2, c2 []string
	for i, v := range []int64{20_000, 20_400} {
		a2 = append(a2, writeResult(t, dir, "a2"+string(rune('0'+i))+".json", mkResult(t, repeat(uint64(1000), 20), repeat(v, 20))))
	}
	for i, v := range []int64{20_390, 20_800} {
		c2 = append(c2, writeResult(t, dir, "c2"+string(rune('0'+i))+".json", mkResult(t, repeat(uint64(1000), 20), repeat(v, 20))))
	}
	rep, _ = Compare(load(t, strings.Join(a2, ",")), load(t, strings.Join(c2, ",")), Options{Floor: 0.001})
	r = metric(t, rep, "run", P50)
	if r.Basis != BasisPerSecond || r.Verdict != Noise || !strings.Contains(r.BasisWords, "ranges overlap") || *r.P >= 0.05 {
		t.Fatalf("2+2 overlapping runs: %+v (%s)", r, r.BasisWords)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeResult(t, dir, "a.json", mkResult(t, []uint64{1, 1, 1, 1}, []int64{1, 1, 1, 1}))
	junk := filepath.Join(dir, "junk.json")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	empty := filepath.Join(dir, "emptydir")
	os.Mkdir(empty, 0o755)
	for _, c := range []struct{ arg, want string }{
		{"", "empty side"},
		{good + ",", "empty name"},
		{filepath.Join(dir, "missing.json"), "no such file"},
		{junk, "not a gen result"},
		{empty, "without results.json"},
		{good + "," + empty, "without results.json"},
	} {
		_, err := Load(c.arg)
		if err == nil || !IsInput(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line input error with %q", c.arg, err, c.want)
		}
	}
}

// One stalled second sets a run's p99; the seconds say the other way:
// within noise, not "faster".
func TestStalledSecond(t *testing.T) {
	dir := t.TempDir()
	lat := repeat(int64(30_000), 10)
	lat[4] = 500_000
	a := writeResult(t, dir, "a.json", mkResult(t, repeat(uint64(1000), 10), lat))
	b := writeResult(t, dir, "b.json", mkResult(t, repeat(uint64(1000), 10), repeat(int64(36_000), 10)))
	rep, err := Compare(load(t, a), load(t, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := metric(t, rep, "run", P99)
	if r.Verdict != Noise || *r.P >= 0.05 || *r.Ratio > 0.1 || !strings.Contains(r.BasisWords, "set by a few seconds: the seconds' ratio is 1.200") {
		t.Fatalf("stalled second: %+v (%s)", r, r.BasisWords)
	}
}
