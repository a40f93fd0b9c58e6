package compare

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
)

// drawResult is one run of a server drawn from a seeded distribution:
// secs seconds after a second of warmup; in each second about perSec·rate
// requests (±10%), each failing with probability 1%, each answered in a
// log-normal latency (median 2 ms·lat, σ 0.5). Two runs with the same rate
// and lat are two runs of one server, identical by construction.
func drawResult(t *testing.T, rng *rand.Rand, secs int, rate, lat float64) *result.Result {
	t.Helper()
	const perSec = 200
	r := &result.Result{Target: "http://127.0.0.1:1/", Mode: "open", WarmupS: 1, DurationS: float64(secs)}
	total := hdr.New(1, 60_000_000, 3)
	r.Seconds = []result.Second{{T: 0, DurS: 1, OK: 100}} // warmup: left out
	for i := range secs {
		h := hdr.New(1, 60_000_000, 3)
		n := int(math.Round(perSec * rate * (1 + 0.1*rng.NormFloat64())))
		ps := result.Second{T: i + 1, DurS: 1}
		for range n {
			if rng.Float64() < 0.01 {
				ps.Non2xx++
				continue
			}
			v := int64(2000 * lat * math.Exp(0.5*rng.NormFloat64()))
			h.RecordValue(v)
			total.RecordValue(v)
			ps.OK++
		}
		enc, err := result.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		ps.P99us, ps.Hist = h.ValueAtQuantile(99), enc
		r.Seconds = append(r.Seconds, ps)
		r.OK += ps.OK
		r.Requests += ps.OK + ps.Non2xx
	}
	r.AchievedRate = float64(r.OK) / r.DurationS
	r.Latency = result.Latency{P50: total.ValueAtQuantile(50), P99: total.ValueAtQuantile(99), P999: total.ValueAtQuantile(99.9)}
	return r
}

// drawSide writes runs drawn runs and returns them as one side's argument.
func drawSide(t *testing.T, rng *rand.Rand, dir, name string, runs int, rate, lat float64) string {
	t.Helper()
	var paths []string
	for i := range runs {
		paths = append(paths, writeResult(t, dir, name+"-"+strconv.Itoa(i)+".json", drawResult(t, rng, 3, rate, lat)))
	}
	return strings.Join(paths, ",")
}

// Two sides of 6 runs each, drawn from one distribution, in 100 pairs:
// five metrics a row are tested (2xx/s, p50, p99, p99.9, errors), each at
// 5%. Without a correction about one row in five would be called
// different; with Holm within the row, at most about one in twenty: at
// most 2 of the first 20 pairs, at most 9 of the 100.
func TestHolmIdenticalRuns(t *testing.T) {
	const pairs = 100
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(29, 7))
	var rows, rows20, rawRows, rawRows20, tests, rawTests int
	for i := range pairs {
		a := drawSide(t, rng, dir, "a"+strconv.Itoa(i), 6, 1, 1)
		b := drawSide(t, rng, dir, "b"+strconv.Itoa(i), 6, 1, 1)
		rep, err := Compare(load(t, a), load(t, b), Options{})
		if err != nil {
			t.Fatal(err)
		}
		row := rep.Rows[0]
		if row.Tests != 5 || rep.Tests != 5 || rep.Correction != "holm" {
			t.Fatalf("pair %d: %d tests in the row, %d in the comparison (%q), want 5: %+v", i, row.Tests, rep.Tests, rep.Correction, row)
		}
		raw := false
		for _, m := range row.Metrics {
			if m.Basis != BasisRuns || m.P == nil || m.PAdj == nil || *m.PAdj < *m.P {
				t.Fatalf("pair %d, %s: %+v", i, m.Metric, m)
			}
			tests++
			if *m.P < 0.05 { // the uncorrected verdict
				rawTests++
				raw = true
			}
		}
		if raw {
			rawRows++
			if i < 20 {
				rawRows20++
			}
		}
		if len(row.Different()) > 0 {
			rows++
			if i < 20 {
				rows20++
			}
			t.Logf("pair %d called different: %+v", i, row.Different())
		}
		if c, q, _ := rep.Summary(); c-q != len(row.Different()) && len(row.Different()) <= 1 {
			t.Errorf("pair %d: summary %d of %d rows quiet, row different on %d", i, q, c, len(row.Different()))
		}
	}
	t.Logf("%d pairs of identical runs: %d rows called different with Holm (%d of the first 20); uncorrected %d rows (%d of the first 20; %d of %d tests at p < 0.05)",
		pairs, rows, rows20, rawRows, rawRows20, rawTests, tests)
	if rows20 > 2 || rows > 9 {
		t.Errorf("pairs of identical runs called different: %d of the first 20, want at most 2; %d of %d, want at most 9", rows20, rows, pairs)
	}
	// the uncorrected per-test rate is about 5%, the row's several times it
	if rawTests > tests/10 || rawRows <= rows {
		t.Errorf("uncorrected: %d of %d tests, %d rows: the draw is not what the test assumes", rawTests, tests, rawRows)
	}
}

// A known 20% difference in one metric is still found after the
// correction: 2xx/s 20% lower, the latency and errors drawn the same; and,
// apart, latency 20% higher.
func TestHolmFindsTwentyPercent(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(29, 20))
	for i := range 5 {
		a := drawSide(t, rng, dir, "a"+strconv.Itoa(i), 6, 1, 1)
		slow := drawSide(t, rng, dir, "s"+strconv.Itoa(i), 6, 0.8, 1)
		rep, err := Compare(load(t, a), load(t, slow), Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := metric(t, rep, "run", Rate)
		if r.Verdict != Slower || !r.Worse || !r.DifferentAll || *r.PAdj >= 0.05 || math.Abs(*r.Ratio-0.8) > 0.1 {
			t.Fatalf("draw %d, 2xx/s 20%% lower: %+v (%s)", i, r, r.BasisWords)
		}
		// (fewer requests also draw p99.9 from fewer samples, which can
		// move it: only 2xx/s is required)
		if d := rep.Different(); len(d) == 0 || d[0].Metric != Rate {
			t.Errorf("draw %d, 2xx/s 20%% lower: the summary lists %+v", i, d)
		}
		late := drawSide(t, rng, dir, "l"+strconv.Itoa(i), 6, 1, 1.2)
		rep, _ = Compare(load(t, a), load(t, late), Options{})
		if r := metric(t, rep, "run", P50); r.Verdict != Slower || !r.DifferentAll || math.Abs(*r.Ratio-1.2) > 0.1 {
			t.Fatalf("draw %d, latency 20%% higher: %+v (%s)", i, r, r.BasisWords)
		}
	}
}

// The summary's family is every test of the comparison: a row's
// difference that survives Holm within its row (p 0.01 of 2 tests: 0.02)
// but not across the comparison's 6 (0.06) is the row's verdict, not the
// summary's; an untested difference (the floor rule) stays in both.
func TestHolmSummaryFamily(t *testing.T) {
	tested := func(p float64) Result {
		return Result{Metric: P50, A: 1, B: 2, Ratio: ptr(2), Basis: BasisPerSecond, Tested: true, P: ptr(p), gate: true}
	}
	rows := []RowResult{
		{Key: "x", Metrics: []Result{tested(0.01), tested(0.5)}},
		{Key: "y", Metrics: []Result{tested(0.6), tested(0.7)}},
		{Key: "z", Metrics: []Result{tested(0.8), tested(0.9), {Metric: Rate, A: 1, B: 2, Ratio: ptr(2), Basis: BasisValues, Different: true}}},
	}
	for i := range rows {
		rows[i].Tests = holmRow(rows[i].Metrics)
	}
	rep := &Report{A: SideInfo{Kind: KindLab}, Rows: rows, Tests: holmAll(rows)}
	x := rows[0].Metrics[0]
	if rows[0].Tests != 2 || rep.Tests != 6 || !x.Different || x.Verdict != Slower || math.Abs(*x.PAdj-0.02) > 1e-12 ||
		x.DifferentAll || math.Abs(*x.PAdjAll-0.06) > 1e-12 {
		t.Fatalf("row x: %+v, %d tests, %d in the comparison", x, rows[0].Tests, rep.Tests)
	}
	if d := rep.Different(); len(d) != 1 || d[0].Row != "z" || d[0].Metric != Rate {
		t.Fatalf("summary lists %+v, want z's untested 2xx/s alone", d)
	}
	if c, q, _ := rep.Summary(); c != 3 || q != 2 {
		t.Fatalf("summary: %d rows, %d quiet", c, q)
	}
	if s := rep.summaryText(); !strings.Contains(s, "6 tests") {
		t.Errorf("the summary does not name its family:\n%s", s)
	}
}
