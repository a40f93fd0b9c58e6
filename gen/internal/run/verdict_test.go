package run

import (
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// TestLagOncePerWakeup: the lag is sampled once per wakeup that finds
// requests due, against the earliest of them, and never for the warmup.
//
// The schedule's logic, not a measurement: it runs in a synctest bubble,
// on a driver that sends nothing, so the clock moves only when the test
// sleeps and the lag is exact.
func TestLagOncePerWakeup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lc := handLifecycle(&Spec{Pacer: Constant(1000, time.Hour), Duration: time.Hour, Connections: 4, Shards: 1})
		time.Sleep(5 * time.Millisecond)
		before := lc.Now()
		lc.admit(lc.Now(), false) // requests 0..5 are due: one sample
		if n := lc.Rec.lag.TotalCount(); n != 1 {
			t.Fatalf("%d lag samples after one wakeup, want 1", n)
		}
		// (Max is its bucket's highest value: 5003 µs for 5000 at 3
		// significant figures.)
		if v, now := lc.Rec.lag.Max(), lc.Now()/1000; v < before/1000 || v > now+1 && !lc.Rec.lag.ValuesAreEquivalent(v, now) {
			t.Errorf("lag %d µs, want the time since request 0 was due (%d..%d µs)", v, before/1000, now)
		}
		// A wakeup just before the next request is due finds nothing due:
		// no sample.
		lc.admit(lc.nextDue-1, false)
		if n := lc.Rec.lag.TotalCount(); n != 1 {
			t.Errorf("%d lag samples after a wakeup with nothing due, want 1", n)
		}
		lc.Rec.warmup = int64(time.Hour) // every request is warmup now
		time.Sleep(3 * time.Millisecond)
		lc.admit(lc.Now(), false)
		if n := lc.Rec.lag.TotalCount(); n != 1 {
			t.Errorf("%d lag samples: warmup requests were sampled", n)
		}
	})
}

// handLifecycle is one loop of a run of spec on a driver that takes
// every request and sends nothing (nopDriver), its clock starting now.
func handLifecycle(spec *Spec) *Lifecycle {
	r := &Run{Spec: spec, Start: time.Now(), histMax: histCeiling(spec)}
	return &Lifecycle{R: r, Rec: newRecorder(int64(spec.Warmup), r.histMax), Schedule: newSchedule(spec, 0, 1, 1000),
		D: nopDriver{}, nextSecond: int64(time.Second)}
}

// nopDriver is a Driver that has a free connection for every request and
// sends nothing.
type nopDriver struct{}

func (nopDriver) Setup() error                        { return nil }
func (nopDriver) Begin(int64)                         {}
func (nopDriver) Lock()                               {}
func (nopDriver) Unlock()                             {}
func (nopDriver) Idle() (int, bool)                   { return 0, true }
func (nopDriver) Send(int, int64, int32, int64)       {}
func (nopDriver) Inflight() int                       { return 0 }
func (nopDriver) Tick(int64)                          {}
func (nopDriver) GiveUp(int64, ErrorClass, error) int { return 0 }
func (nopDriver) Wait(int64, int64)                   {}
func (nopDriver) Wake()                               {}
func (nopDriver) AccountBegin()                       {}
func (nopDriver) AccountEnd()                         {}
func (nopDriver) Finish()                             {}
func (nopDriver) Teardown()                           {}

func TestHistCeiling(t *testing.T) {
	h := newHistMax(histCeiling(&Spec{Duration: 100 * time.Second, Timeout: 30 * time.Second}))
	record(h, 150_000_000) // 150 s: a request pending from the start to the end of the drain
	if got := h.Max(); got < 149_000_000 || got > 151_000_000 {
		t.Errorf("150 s recorded as %d µs: the ceiling must be at least duration + 2 x timeout", got)
	}
	short := &Spec{Duration: time.Second, Timeout: time.Second}
	if histCeiling(short) != histFloor {
		t.Errorf("ceiling %d for a short run, want the 60 s floor", histCeiling(short))
	}
}

// TestWakeFloorJudged: the probe's floor at the quantile the lag rule
// judged explains the lag when it is at least half of it, and the reason
// says which; a run whose lag rule did not fire keeps no floor.
func TestWakeFloorJudged(t *testing.T) {
	floor := func(late int64) measuredFloor {
		h := newHist()
		h.RecordValues(60, 900)
		h.RecordValues(late, 100) // the worst tenth
		return measuredFloor{WakeFloor: &result.WakeFloor{}, hist: h}
	}
	for _, tc := range []struct {
		late    int64
		explain bool
		words   string
	}{
		{late: 1_200, explain: true, words: "this machine wakes sleeping threads late itself"},
		{late: 900, explain: true, words: "not loadlab's loops"}, // 900 of 1.8 ms: half
		{late: 800, explain: false, words: "the machine itself woke on time just after the run"},
		{late: 100, explain: false, words: "the lateness was the generator's own"},
	} {
		g := result.Generator{LagP99us: 1_800}
		j := lagJudge{samples: 5000}
		j.verdict(&g, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 4_000}})
		if !g.Bottleneck || j.fired == nil || j.fired.name != "p99" || j.fired.beyond != 1_800 {
			t.Fatalf("lag p99 1.8 ms beside 4 ms: bottleneck %v, fired %+v", g.Bottleneck, j.fired)
		}
		j.noteWakeFloor(&g, floor(tc.late))
		f := g.WakeFloor
		if f == nil || f.Explains != tc.explain || f.Quantile != "p99" || f.LagUs != 1_800 || f.AtQuantileUs != tc.late {
			t.Errorf("floor %d µs at p99 against lag 1.8 ms: %+v, want explains %v", tc.late, f, tc.explain)
		}
		if !strings.Contains(g.Reason, tc.words) {
			t.Errorf("floor %d µs: reason %q lacks %q", tc.late, g.Reason, tc.words)
		}
	}
	healthy := result.Generator{LagP99us: 300}
	hj := lagJudge{samples: 5000}
	hj.verdict(&healthy, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 4_000}})
	hj.noteWakeFloor(&healthy, floor(2_000))
	if hj.fired != nil || healthy.WakeFloor != nil || healthy.Reason != "" {
		t.Errorf("no lag judged, yet %+v %q", healthy.WakeFloor, healthy.Reason)
	}
}

// TestProbeWakeFloor: the probe sleeps on every CPU it was given and
// reports the overshoot beyond the sleep asked for.
func TestProbeWakeFloor(t *testing.T) {
	cpus, err := pin.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	f := probeWakeFloor(cpus[:1], 20, time.Millisecond)
	took := time.Since(start)
	if f.Sleeps != 20 || f.SleepUs != 1000 || f.P50us < 0 || f.P50us > f.P95us || f.P95us > f.P99us || f.P99us > f.Maxus {
		t.Errorf("%+v", f)
	}
	// 20 sleeps of 1 ms take at least 20 ms, and the overshoot recorded
	// adds up to no more than the time beyond them.
	if took < 20*time.Millisecond || time.Duration(f.P50us*10)*time.Microsecond > took-20*time.Millisecond {
		t.Errorf("20 sleeps took %v, p50 overshoot %d µs", took, f.P50us)
	}
	if both := probeWakeFloor(cpus, 5, time.Millisecond); both.Sleeps != int64(5*len(cpus)) {
		t.Errorf("%d sleeps on %d CPUs, want 5 each", both.Sleeps, len(cpus))
	}
}

// TestVerdictLagRule: the lag rule compares the generator's lateness with
// the latency it reports at the same quantile.
func TestVerdictLagRule(t *testing.T) {
	for _, tc := range []struct {
		lag, lat int64
		want     bool
	}{
		{lag: 2_000, lat: 5_000_000, want: false}, // 2 ms of lag beside 5 s of latency: harmless
		{lag: 2_000, lat: 6_000, want: true},      // a third of a 6 ms latency
		{lag: 800, lat: 1_000, want: false},       // under the 1 ms floor
	} {
		g := result.Generator{LagP99us: tc.lag}
		gJ := lagJudge{samples: 5000}
		gJ.verdict(&g, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: tc.lat}})
		if g.Bottleneck != tc.want {
			t.Errorf("lag p99 %d µs, latency p99 %d µs: bottleneck %v, want %v (%s)", tc.lag, tc.lat, g.Bottleneck, tc.want, g.Reason)
		}
	}
	// Lag within the pacing tolerance is the user's choice.
	tol := result.Generator{LagP99us: 1_050, PacingToleranceUs: 1_000}
	tolJ := lagJudge{samples: 5000}
	tolJ.verdict(&tol, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 1_200}})
	if tol.Bottleneck {
		t.Errorf("lag 1.05 ms at a 1 ms tolerance: %s", tol.Reason)
	}
	tol = result.Generator{LagP99us: 3_500, PacingToleranceUs: 1_000}
	tolJ = lagJudge{samples: 5000}
	tolJ.verdict(&tol, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 6_000}})
	if !tol.Bottleneck || !strings.Contains(tol.Reason, "beyond the pacing tolerance") {
		t.Errorf("lag 3.5 ms at a 1 ms tolerance beside 6 ms: %v %q", tol.Bottleneck, tol.Reason)
	}
	// p99 of 500 wakeups is 5 samples: not judged.
	few := result.Generator{LagP99us: 2_000}
	fewJ := lagJudge{samples: 500}
	fewJ.verdict(&few, nil, &result.Result{Mode: "open", Latency: result.Latency{P99: 6_000}})
	if few.Bottleneck {
		t.Errorf("p99 judged on 5 samples: %s", few.Reason)
	}
	// 200 wakeups (10 ms ticks for 2 s), 20 of them 40 ms late beside
	// responses of 10 ms: p95 has 10 samples beyond it and is judged.
	lagH, latH := newHist(), newHist()
	lagH.RecordValues(9_000, 180)
	lagH.RecordValues(50_000, 20)
	latH.RecordValues(10_000, 400)
	late := result.Generator{PacingToleranceUs: 10_000}
	lateJ := lagJudge{samples: 200, hist: lagH}
	lateJ.verdict(&late, nil, &result.Result{Mode: "open", CorrectedHist: latH, Latency: result.Latency{P50: 10_000, P99: 10_000}})
	if !late.Bottleneck || !strings.Contains(late.Reason, "p95") {
		t.Errorf("10 of 200 wakeups 40 ms late: %v %q, want p95 judged", late.Bottleneck, late.Reason)
	}
	g := result.Generator{CPUs: []int{3}}
	new(lagJudge).verdict(&g, []CPUShare{{busy: 0.5, wait: 0.45}}, &result.Result{Mode: "closed"})
	if !g.Bottleneck || !strings.Contains(g.Reason, "loop 0 (cpu 3)") || !strings.Contains(g.Reason, "starved") {
		t.Errorf("busy 0.5 + wait 0.45: %v %q", g.Bottleneck, g.Reason)
	}
	g = result.Generator{CPUs: []int{3}}
	new(lagJudge).verdict(&g, []CPUShare{{busy: 0.7, wait: 0.1, softirq: 0.05}}, &result.Result{Mode: "closed"})
	if g.Bottleneck {
		t.Errorf("busy 0.7 + starved 0.1 is under 90%%: %q", g.Reason)
	}
	// A lean QUIC loop starved for a quarter of its time limits the run
	// even with time to spare (its ACKs wait with it); a TCP loop does not.
	for _, tc := range []struct {
		quic    bool
		starved float64
		want    bool
	}{{true, 0.3, true}, {true, 0.2, false}, {false, 0.3, false}} {
		g = result.Generator{CPUs: []int{3}}
		j := &lagJudge{starvedLimits: tc.quic}
		j.verdict(&g, []CPUShare{{busy: 0.1, wait: tc.starved}}, &result.Result{Mode: "closed"})
		if g.Bottleneck != tc.want || tc.want && !strings.Contains(g.Reason, "loop 0 (cpu 3) was starved 30%") {
			t.Errorf("quic %v busy 0.1 starved %v: %v %q, want bottleneck %v", tc.quic, tc.starved, g.Bottleneck, g.Reason, tc.want)
		}
	}
	g = result.Generator{CPUs: []int{3}}
	(&lagJudge{perCPU: true}).verdict(&g, []CPUShare{{busy: 0.5, wait: 0.45}}, &result.Result{Mode: "closed"})
	if !strings.HasPrefix(g.Reason, "cpu 3 had no time") {
		t.Errorf("per CPU: %q", g.Reason)
	}
}

// TestAccountDisjoint: busy, starved and idle are disjoint and add up to
// the wall time. The numbers are a closed-loop run's on both CPUs of this
// machine (loop 0: its thread ran 28.8% of the window, waited to run
// 57.4%, and its CPU spent 18.2% in softirqs, most of them inside those
// two): adding the CPU's softirq to starved made busy + starved 104%.
// The CPU's softirq and steal are context, not a share of their own; the
// verdict judges busy + starved.
func TestAccountDisjoint(t *testing.T) {
	for _, s := range []CPUShare{
		{busy: 0.288, wait: 0.574, softirq: 0.182},
		{busy: 0.42, wait: 0.79, softirq: 0.3, steal: 0.05}, // reads a moment apart, or a CPU's threads waiting at once
		{busy: 1.02, wait: 0.01},
		{busy: 0.1, wait: 0, softirq: 0.5},
	} {
		b, st, id := s.Split()
		if b < 0 || st < 0 || id < 0 || math.Abs(b+st+id-1) > 1e-9 || st != s.starved() || id != s.idle() {
			t.Errorf("%+v: busy %.3f starved %.3f idle %.3f: want three shares >= 0 that add up to 1", s, b, st, id)
		}
		if s.wait+s.busy <= 1 && (b != s.busy || st != s.wait) {
			t.Errorf("%+v: busy %.3f starved %.3f: want the thread's own run and run-queue wait", s, b, st)
		}
	}
	g := result.Generator{CPUs: []int{0}}
	new(lagJudge).verdict(&g, []CPUShare{{busy: 0.288, wait: 0.574, softirq: 0.182}}, &result.Result{Mode: "closed"})
	if g.Bottleneck {
		t.Errorf("busy 28.8%% + starved 57.4%% (idle 13.8%%) is under 90%%: %s", g.Reason)
	}
}

// TestLagRuleAtReportedQuantiles: the lag rule judges the quantiles a row
// reports and ranks (p50, p95, p99). A fixed-rate run whose generator was
// a millisecond or two late on a few wakeups in 10,000 (p99.9) beside a
// corrected p99.9 of 8 ms is not generator-limited: its p99 and below are
// untouched, and the p99.9 gets a caveat. The same lag at p95 still is.
func TestLagRuleAtReportedQuantiles(t *testing.T) {
	rare, lat := newHist(), newHist()
	rare.RecordValues(40, 9_980)
	rare.RecordValues(2_200, 20)
	lat.RecordValues(600, 9_900)
	lat.RecordValues(8_000, 100)
	g := result.Generator{LagP50us: 40, LagP99us: 40, LagP999us: 2_200}
	gJ := lagJudge{samples: 10_000, hist: rare}
	gJ.verdict(&g, nil, &result.Result{Mode: "open", CorrectedHist: lat, Latency: result.Latency{P50: 600, P95: 600, P99: 800, P999: 8_000}})
	if g.Bottleneck {
		t.Errorf("rare lag at p99.9 only made the run generator-limited: %s", g.Reason)
	}
	if len(g.LagCaveats) != 1 || g.LagCaveats[0].Quantile != "p99.9" || g.LagCaveats[0].LagUs != 2_200 || g.LagCaveats[0].LatencyUs != 8_000 {
		t.Errorf("caveats %+v, want one on p99.9: lag 2.2 ms beside 8 ms", g.LagCaveats)
	}
	// 6% of the wakeups 2.2 ms late: p95's lag is material.
	often := newHist()
	often.RecordValues(40, 9_400)
	often.RecordValues(2_200, 600)
	g = result.Generator{LagP50us: 40, LagP99us: 2_200, LagP999us: 2_200}
	gJ = lagJudge{samples: 10_000, hist: often}
	gJ.verdict(&g, nil, &result.Result{Mode: "open", CorrectedHist: lat, Latency: result.Latency{P50: 600, P95: 3_000, P99: 8_000, P999: 9_000}})
	if !g.Bottleneck || !strings.Contains(g.Reason, "send lag p95") || len(g.LagCaveats) != 0 {
		t.Errorf("lag at p95: bottleneck %v %q caveats %+v, want p95 judged", g.Bottleneck, g.Reason, g.LagCaveats)
	}
}
