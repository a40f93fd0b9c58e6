package compare

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// Input kinds: what one side of a comparison holds.
const (
	KindGen = "gen" // gen results (JSON or HdrHistogram logs): one row
	KindLab = "lab" // lab results directories: a row per unit (and rate)
)

// Side is one side of a comparison: every run of every row its inputs
// hold. Repeated runs (several inputs, or a lab scenario's runs) add runs
// to the same rows.
type Side struct {
	Arg    string   // as given
	Kind   string   // KindGen or KindLab
	Inputs []string // the files and directories it read
	Rows   []*Row   // in the order first seen
	byKey  map[string]*Row
}

// Row is one measured thing (a gen run's target, a lab unit, a fixed
// rate of a unit) with its runs.
type Row struct {
	Key    string
	Method string  // search, fixed, closed; "" for gen results
	Floor  float64 // a search's precision: the resolution of its rate found
	Runs   []*Run
	// Vs are the row's values over the control of their own round (a lab
	// run with a control: results.VsControl), one per round measured, of
	// metric VsMetric (Rate or P99).
	Vs       []float64
	VsMetric Metric
	// Offered is the rate a fixed-rate row offered when it was derived in
	// the run (rate_from): two runs may have derived other rates.
	Offered float64
	// Ran is what ran for a lab row: its profile's file, binary and
	// config as results.json recorded them (nil for gen results and
	// results of older versions).
	Ran *results.ProfileRecord
}

// Run is one measurement of a row: per metric its whole-run value and,
// where the source has them, its per-second values over the measured
// window.
type Run struct {
	Source string
	vals   map[Metric]value
}

type value struct {
	v    float64
	ok   bool
	secs []float64
	// A search's rate found: the bracket its own steps put the boundary
	// in (see bracket); lo = hi = 0 when unknown.
	lo, hi float64
	// A search's other metrics: how far apart this search's own steps at
	// the rate found were (max/min of the metric over them; 0: one step).
	repeat float64
}

// Load reads one side: a comma-separated list of gen result files (JSON
// as gen --json writes it; several results in one file are the shards of
// one run and are merged; *.hlog are gen --hdr-log files) or of lab
// results directories (or their results.json). Every input is one run of
// its rows; all must be of one kind.
func Load(arg string) (*Side, error) {
	s := &Side{Arg: arg, byKey: map[string]*Row{}}
	if strings.TrimSpace(arg) == "" {
		return nil, inputErr("an empty side: give a file, a directory or a comma-separated list of them")
	}
	for _, p := range strings.Split(arg, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, inputErr("%q: an empty name in the list", arg)
		}
		kind, err := s.loadPath(p)
		if err != nil {
			return nil, err
		}
		if s.Kind != "" && s.Kind != kind {
			return nil, inputErr("%s: a %s input among %s inputs: one side holds runs of one kind", p, kindWords(kind), kindWords(s.Kind))
		}
		s.Kind = kind
		s.Inputs = append(s.Inputs, p)
	}
	return s, nil
}

func kindWords(k string) string {
	if k == KindLab {
		return "lab results"
	}
	return "gen result"
}

// loadPath adds the runs of one input and returns its kind.
func (s *Side) loadPath(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", inputErr("%v", err)
	}
	if fi.IsDir() || filepath.Base(p) == results.FileName {
		dir := p
		if !fi.IsDir() {
			dir = filepath.Dir(p)
		}
		if _, err := os.Stat(filepath.Join(dir, results.FileName)); err != nil {
			return "", inputErr("%s: a directory without %s: give a lab results directory (lab run --out) or gen result files", p, results.FileName)
		}
		f, err := results.Load(dir)
		if err != nil {
			return "", inputErr("%s: %s", p, oneLine(err.Error()))
		}
		s.addLab(p, f)
		return KindLab, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", inputErr("%v", err)
	}
	if strings.HasSuffix(p, ".hlog") {
		r, err := result.ReadHdrLog(p, data)
		if err != nil {
			return "", err
		}
		s.add("run", "", 0, genRun(p, r, true, nil))
		return KindGen, nil
	}
	rs, err := result.ReadResults(p, data)
	if err != nil {
		return "", err
	}
	r := rs[0]
	if len(rs) > 1 { // the shards of one run, as kubectl logs prints them
		var m result.Merger
		for i, x := range rs {
			if err := m.Add(fmt.Sprintf("%s#%d", p, i+1), x); err != nil {
				return "", inputErr("%s holds %d results that are not the shards of one run: %s", p, len(rs), oneLine(err.Error()))
			}
		}
		if r, err = m.Result(); err != nil {
			return "", inputErr("%s: %s", p, oneLine(err.Error()))
		}
	}
	s.add("run", "", 0, genRun(p, r, false, nil))
	return KindGen, nil
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// add appends run to the row key, creating it.
func (s *Side) add(key, method string, floor float64, run *Run) {
	r := s.byKey[key]
	if r == nil {
		r = &Row{Key: key, Method: method, Floor: floor}
		s.byKey[key] = r
		s.Rows = append(s.Rows, r)
	}
	r.Runs = append(r.Runs, run)
}

// Row returns the row called key, nil if none.
func (s *Side) Row(key string) *Row { return s.byKey[key] }

// proxyData is what the lab measured of the proxy during a step.
type proxyData struct {
	sum     results.ProxySummary
	samples []results.ProxySample
	from    float64 // the warmup: samples before it are left out
}

// genRun takes the metrics of one gen result. hlog: an HdrHistogram log
// (latency only: no status, so no 2xx rate or errors).
func genRun(src string, r *result.Result, hlog bool, px *proxyData) *Run {
	run := &Run{Source: src, vals: map[Metric]value{}}
	var secs []result.Second
	for _, ps := range r.Seconds {
		if !hlog && float64(ps.T) < r.WarmupS {
			continue
		}
		if ps.DurS != 0 && ps.DurS < 0.5 { // a partial last second
			continue
		}
		secs = append(secs, ps)
	}
	dur := func(ps result.Second) float64 {
		if ps.DurS > 0 {
			return ps.DurS
		}
		return 1
	}
	if !hlog {
		v := value{v: r.AchievedRate, ok: true}
		for _, ps := range secs {
			v.secs = append(v.secs, float64(ps.OK)/dur(ps))
		}
		run.vals[Rate] = v
		e := value{ok: r.Requests > 0}
		if r.Requests > 0 {
			e.v = float64(r.Requests-min(r.OK, r.Requests)) / float64(r.Requests)
		}
		for _, ps := range secs {
			if n := ps.OK + ps.Non2xx + ps.Errors; n > 0 {
				e.secs = append(e.secs, float64(ps.Non2xx+ps.Errors)/float64(n))
			}
		}
		run.vals[Errors] = e
	}
	for _, m := range []struct {
		m     Metric
		v     int64
		q     float64
		ofSec func(result.Second) int64
	}{
		{P50, r.Latency.P50, 50, nil},
		{P99, r.Latency.P99, 99, func(ps result.Second) int64 { return ps.P99us }},
		{P999, r.Latency.P999, 99.9, nil},
	} {
		if m.v <= 0 {
			continue
		}
		v := value{v: float64(m.v), ok: true}
		for _, ps := range secs {
			var x int64
			if h, err := result.DecodeHist(ps.Hist); err == nil && h != nil && h.TotalCount() > 0 {
				x = h.ValueAtQuantile(m.q)
			} else if m.ofSec != nil {
				x = m.ofSec(ps)
			}
			if x > 0 {
				v.secs = append(v.secs, float64(x))
			}
		}
		run.vals[m.m] = v
	}
	if px != nil && px.sum.Samples > 0 {
		cpu := value{v: px.sum.CPUAvg, ok: true}
		mem := value{v: float64(px.sum.NeedAvg), ok: true}
		for _, sm := range px.samples {
			if sm.T >= px.from {
				cpu.secs = append(cpu.secs, sm.CPU)
				mem.secs = append(mem.secs, float64(sm.MemAnon+sm.MemKernel))
			}
		}
		run.vals[CPU], run.vals[Mem] = cpu, mem
	}
	return run
}

// stepRun is genRun of a lab step, with the proxy's samples.
func stepRun(src string, st *results.Step) *Run {
	from := 0.0
	if st.Result != nil {
		from = st.Result.WarmupS
	}
	return genRun(src, st.Result, false, &proxyData{sum: st.ProxySum, samples: st.Proxy, from: from})
}

// addLab adds the rows of a lab results file: per unit, every search
// (its rate found, and the rest from its last passing confirmation), or
// every run of a fixed rate or a closed loop.
func (s *Side) addLab(src string, f *results.File) {
	for _, u := range f.Units {
		if u.Status != results.StatusDone || len(u.Steps) == 0 {
			continue
		}
		n := len(s.Rows)
		s.addUnit(src, f, u)
		s.ran(n, f.Profile(u.Profile))
	}
}

// addUnit adds the rows of one unit.
func (s *Side) addUnit(src string, f *results.File, u *results.Unit) {
	switch u.Method {
	case plan.MethodSearch:
		prec := 0.0
		if sc := f.Scenario(u.Scenario); sc != nil {
			prec = sc.Eff.Search.Precision
		}
		all, tags := u.AllSearches()
		for k, sr := range all {
			if sr == nil || !sr.Confirmed {
				continue
			}
			run := &Run{Source: src, vals: map[Metric]value{}}
			if st := u.ConfirmedStep(sr, tags[k]); st != nil && st.Result != nil {
				run = stepRun(src, st)
				repeats(run, u, sr.Rate, tags[k])
			}
			lo, hi := bracket(u, sr, tags[k], prec)
			run.vals[Rate] = value{v: sr.Rate, ok: true, lo: lo, hi: hi} // the rate found: no per-second values
			s.add(u.ID, u.Method, prec, run)
		}
	case plan.MethodFixed:
		var rates []float64
		for _, st := range u.Steps {
			if st.Result != nil && !st.Interrupted && !slices.Contains(rates, st.Rate) {
				rates = append(rates, st.Rate)
			}
		}
		for _, rate := range rates {
			key := fmt.Sprintf("%s @ %g req/s", u.ID, rate)
			if rf := u.RateFrom; rf != nil && len(rates) == 1 {
				// A rate derived in the run differs between runs: the
				// row is the share of what the source found.
				key = fmt.Sprintf("%s @ %g%% of %s's rate found", u.ID, 100*rf.Share, rf.Unit)
			}
			for _, st := range u.Steps {
				if st.Result != nil && !st.Interrupted && st.Rate == rate {
					s.add(key, u.Method, 0, stepRun(src, st))
				}
			}
			if len(rates) == 1 {
				s.setVs(key, u.VsControl)
				if r := s.byKey[key]; r != nil && u.RateFrom != nil {
					r.Offered = rate
				}
			}
		}
		return
	default:
		for _, st := range u.Steps {
			if st.Result != nil && !st.Interrupted {
				s.add(u.ID, u.Method, 0, stepRun(src, st))
			}
		}
	}
	s.setVs(u.ID, u.VsControl)
}

// ran records rec as what ran for the rows added from index n on.
func (s *Side) ran(n int, rec *results.ProfileRecord) {
	for _, r := range s.Rows[n:] {
		if r.Ran == nil {
			r.Ran = rec
		}
	}
}

// setVs gives row key the unit's values over its rounds' controls (those
// measured).
func (s *Side) setVs(key string, vc *results.VsControl) {
	r := s.byKey[key]
	if r == nil || vc == nil {
		return
	}
	r.Vs, r.VsMetric = nil, Metric(vc.Metric)
	for _, v := range vc.Rounds {
		if v > 0 {
			r.Vs = append(r.Vs, v)
		}
	}
}

// bracket is where a search's own steps (those tagged run) put its
// boundary: from the rate found, or lower where a rate failed below one
// that passed (the steps disagreed there), up to the lowest rate that
// failed above every pass (the rate found itself for a search capped at
// its maximum; the precision above it when no failing step is on record).
// Without disagreement it is the search's precision window: last pass to
// first fail.
func bracket(u *results.Unit, sr *search.Result, run int, prec float64) (lo, hi float64) {
	maxPass := 0.0
	for _, st := range u.Steps {
		if st.Run == run && st.Verdict == string(search.Pass) {
			maxPass = max(maxPass, st.Rate)
		}
	}
	lo, hi = sr.Rate, sr.Rate
	above := math.Inf(1)
	for _, st := range u.Steps {
		if st.Run != run || st.Verdict == string(search.Pass) || st.Rate <= 0 || st.Interrupted {
			continue
		}
		if st.Rate <= maxPass {
			lo = min(lo, st.Rate)
		} else {
			above = min(above, st.Rate)
		}
	}
	switch {
	case !math.IsInf(above, 1):
		hi = max(hi, above)
	case sr.FirstFail > 0:
		hi = max(hi, sr.FirstFail)
	case !sr.Capped:
		hi = sr.Rate * (1 + prec) // no failing step on record: its precision
	}
	return lo, max(hi, maxPass)
}

// repeats notes, per metric of run (a search's confirmation), how far
// apart the search's own steps at rate were: at a search's boundary
// latency swings between runs of one rate (a queue builds or it does
// not), and this is that swing measured.
func repeats(run *Run, u *results.Unit, rate float64, tag int) {
	var steps []*Run
	for _, st := range u.Steps {
		if st.Run == tag && st.Rate == rate && st.Result != nil && !st.Interrupted {
			steps = append(steps, stepRun("", st))
		}
	}
	if len(steps) < 2 {
		return
	}
	for m, v := range run.vals {
		lo, hi := math.Inf(1), 0.0
		for _, r := range steps {
			if x, ok := r.vals[m]; ok && x.ok {
				lo, hi = min(lo, x.v), max(hi, x.v)
			}
		}
		if lo > 0 && hi > lo {
			v.repeat = hi / lo
			run.vals[m] = v
		}
	}
}
