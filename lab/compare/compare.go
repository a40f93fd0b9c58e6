// Package compare answers "is this difference real?" for two results: two
// gen runs (JSON or HdrHistogram logs), two lab results directories, or
// two sets of repeated runs of either. Per row and metric (2xx/s, p50,
// p99, p99.9, errors, proxy CPU, memory) it gives both values, the ratio
// B/A with its confidence interval, and a verdict (faster, slower, higher,
// lower, or within noise), with lab/spread's rules:
//
//   - 4 or more runs a side: a Mann-Whitney U test over the runs' values at
//     p < 0.05 (Holm-corrected, below);
//   - fewer: the test over the runs' per-second values, and a difference
//     must also exceed a floor (±10% unless set otherwise), since one run's seconds understate the run-to-run noise
//     (10–20% on a small machine); with 2 or 3 runs a side, runs whose
//     min–max ranges overlap are within noise whatever the seconds say;
//   - a search's rate found (no per-second values), fewer than 4 searches
//     a side: no test; tied when the searches' brackets overlap, each the
//     span its own steps put the boundary in (last pass to first fail,
//     wider where its steps disagreed: a rate that failed below one that
//     passed). Its other metrics come from its confirmation at the rate
//     found, at the boundary, where latency swings with a few percent of
//     capacity: shown, not judged;
//   - another value without per-second data: its runs' ranges widened by
//     the floor, no test.
//
// The tests' p are corrected for multiple comparisons with Holm–Bonferroni:
// a row's verdicts across the row's tested metrics (p_adj), so that two
// runs of one server are called different on some metric of a row at most
// about Alpha of the time; the summary (Summary, Different) across every
// test of the comparison (p_adj_all). The floor and range rules are not
// changed: they still must hold besides the corrected test.
//
// Each metric says which basis it used. Check applies --fail-if rules.
//
// Imports: gen, internal/units, lab/plan, lab/results, lab/search and
// lab/spread, to read results; it starts nothing, so it must not import
// lab/scenario, lab/check or cmd.
package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/spread"
)

// DefaultFloor is the floor a difference found in one run's per-second
// values must exceed: the run-to-run noise of a small machine.
const DefaultFloor = 0.10

// maxSeconds bounds the per-second values a side's ratio interval uses:
// longer series are averaged in consecutive groups down to about this.
const maxSeconds = 300

// Options set a comparison's floor (0: DefaultFloor).
type Options struct {
	Floor float64
}

// Compare compares side b against side a, row by row.
func Compare(a, b *Side, o Options) (*Report, error) {
	if a.Kind != b.Kind {
		return nil, inputErr("A holds %s and B %s: compare gen results with gen results, lab results with lab results", kindWords(a.Kind), kindWords(b.Kind))
	}
	floor := o.Floor
	if floor == 0 {
		floor = DefaultFloor
	}
	if floor < 0 || floor >= 10 || math.IsNaN(floor) {
		return nil, inputErr("floor %g: want a share such as 0.1 for ±10%%", floor)
	}
	rep := &Report{A: info(a), B: info(b), Floor: floor, Alpha: spread.Alpha, Correction: "holm"}
	for _, ra := range a.Rows {
		rb := b.Row(ra.Key)
		if rb == nil {
			rep.Rows = append(rep.Rows, RowResult{Key: ra.Key, Method: ra.Method, Only: "A"})
			continue
		}
		rr := RowResult{Key: ra.Key, Method: ra.Method, Ran: ranDiffers(ra.Ran, rb.Ran)}
		for _, m := range Metrics {
			if res, ok := compareMetric(m, ra, rb, floor); ok {
				rr.Metrics = append(rr.Metrics, res)
			}
		}
		rr.Tests = holmRow(rr.Metrics)
		rep.Rows = append(rep.Rows, rr)
	}
	for _, rb := range b.Rows {
		if a.Row(rb.Key) == nil {
			rep.Rows = append(rep.Rows, RowResult{Key: rb.Key, Method: rb.Method, Only: "B"})
		}
	}
	rep.Tests = holmAll(rep.Rows)
	return rep, nil
}

// ranDiffers says what differs between what ran for a row in A and in B:
// the config (templates), the binary, the profile file.
func ranDiffers(a, b *results.ProfileRecord) []string {
	if a == nil || b == nil {
		return nil
	}
	short := func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	}
	var out []string
	if a.ConfigSHA256 != b.ConfigSHA256 {
		out = append(out, fmt.Sprintf("the config differs (templates SHA-256 %s in A, %s in B)", short(a.ConfigSHA256), short(b.ConfigSHA256)))
	}
	if a.BinarySHA256 != b.BinarySHA256 {
		out = append(out, fmt.Sprintf("the binary differs (%s, %s, SHA-256 %s in A; %s, %s, SHA-256 %s in B)", a.Version, a.Binary, short(a.BinarySHA256), b.Version, b.Binary, short(b.BinarySHA256)))
	}
	if a.SHA256 != b.SHA256 && a.ConfigSHA256 == b.ConfigSHA256 {
		out = append(out, fmt.Sprintf("the profile file differs (SHA-256 %s in A, %s in B)", short(a.SHA256), short(b.SHA256)))
	}
	return out
}

// holmRow decides a row's tested metrics: each p Holm-corrected across
// the row's tests (PAdj), different when that is below Alpha and the
// metric's other conditions hold. A test whose values are all one number
// (no errors on either side) is left out of the family. It returns the
// number of tests in the family.
func holmRow(ms []Result) int {
	var ps []float64
	var at []int
	for i, m := range ms {
		if m.Tested && m.P != nil {
			if m.constant {
				ms[i].PAdj, ms[i].Different = m.P, false
				ms[i].setVerdict()
				continue
			}
			ps, at = append(ps, *m.P), append(at, i)
		}
	}
	adj, reject := spread.Holm(ps, spread.Alpha)
	for k, i := range at {
		r := &ms[i]
		r.PAdj = ptr(adj[k])
		if len(ps) > 1 {
			p := pWords(*r.P)
			r.BasisWords = strings.Replace(r.BasisWords, p, fmt.Sprintf("%s, Holm %s over %d tests", p, pWords(adj[k]), len(ps)), 1)
		}
		r.Different = reject[k] && r.gate
		r.setVerdict()
	}
	return len(ps)
}

// holmAll corrects every test of the comparison as one family (PAdjAll)
// and sets what the summary counts (DifferentAll). It returns the number
// of tests.
func holmAll(rows []RowResult) int {
	var ps []float64
	var at []*Result
	for i := range rows {
		for j := range rows[i].Metrics {
			r := &rows[i].Metrics[j]
			r.DifferentAll = r.Different
			if r.Tested && r.P != nil && r.constant {
				r.PAdjAll = r.P
			} else if r.Tested && r.P != nil {
				ps, at = append(ps, *r.P), append(at, r)
			}
		}
	}
	adj, reject := spread.Holm(ps, spread.Alpha)
	for k, r := range at {
		r.PAdjAll = ptr(adj[k])
		r.DifferentAll = r.Different && reject[k]
	}
	return len(ps)
}

// oneNumber reports whether every value of a and b is the same number.
func oneNumber(a, b []float64) bool {
	for _, x := range append(a[1:], b...) {
		if x != a[0] {
			return false
		}
	}
	return true
}

// setVerdict writes the verdict from Different.
func (r *Result) setVerdict() {
	r.Verdict, r.Worse = Noise, false
	if r.Different {
		up := r.B > r.A
		r.Worse = up != higherBetter(r.Metric)
		r.Verdict = direction(r.Metric, up)
	}
}

func info(s *Side) SideInfo { return SideInfo{Arg: s.Arg, Kind: s.Kind, Inputs: s.Inputs} }

// values are the runs' whole-run values of m and their pooled seconds.
func values(r *Row, m Metric) (vals, secs []float64) {
	for _, run := range r.Runs {
		if v, ok := run.vals[m]; ok && v.ok {
			vals = append(vals, v.v)
			secs = append(secs, v.secs...)
		}
	}
	return vals, secs
}

// compareMetric compares metric m of two rows; false when neither side
// has it (a gen result has no proxy CPU).
func compareMetric(m Metric, ra, rb *Row, floor float64) (res Result, ok bool) {
	va, sa := values(ra, m)
	vb, sb := values(rb, m)
	res = Result{Metric: m, RunsA: len(va), RunsB: len(vb), Floor: floor}
	if len(va) == 0 && len(vb) == 0 {
		return res, false
	}
	if len(va) == 0 || len(vb) == 0 {
		res.Verdict, res.Basis, res.BasisWords = NoData, "", "one side has no value"
		return res, true
	}
	res.A, res.B = spread.Of(va).Median, spread.Of(vb).Median
	switch {
	case res.A != 0:
		res.Ratio = ptr(res.B / res.A)
	case res.B == 0:
		res.Ratio = ptr(1)
	}
	if m == Rate && (ra.Floor > 0 || rb.Floor > 0) {
		res.Floor = max(ra.Floor, rb.Floor) // a search's rate found is known to its precision
	}
	n := func(a, b int, unit string) string { return fmt.Sprintf("%d+%d %s", a, b, unit) }
	if ra.Offered != rb.Offered && ra.Offered > 0 && rb.Offered > 0 {
		// A rate derived in each run (rate_from): at different offered
		// rates every metric measures a different load.
		res.Verdict, res.Basis = Other, BasisValues
		res.BasisWords = fmt.Sprintf("not compared: each side offered the rate its own run derived (%s vs %s req/s)", units.Rate(ra.Offered), units.Rate(rb.Offered))
		return res, true
	}
	if m != Rate && ra.Method == "search" {
		if at, bt := ratesFound(ra), ratesFound(rb); !slices.Equal(at, bt) {
			// Latency, errors, CPU and memory of a search come from its
			// last passing confirmation, at the rate it found: at
			// different rates they measure different loads.
			res.Verdict, res.Basis = Other, BasisValues
			res.BasisWords = fmt.Sprintf("not compared: each side's confirmation at its own rate found (%s vs %s req/s)", rateList(at), rateList(bt))
			return res, true
		}
		// At the same rate found the confirmation still sits at the
		// search's boundary, where a few percent of capacity decide
		// whether a queue builds: latency there swings between two steps
		// of one rate in one run (up to 100x at p50 in two make lab runs),
		// so it says nothing the rate found does not. Shown, not judged.
		res.Verdict, res.Basis = Boundary, BasisValues
		res.BasisWords = "not judged: at the search's boundary, where a few percent of capacity decide whether a queue builds"
		if sw := max(swing(ra, m), swing(rb, m)); sw > 1 {
			res.BasisWords += fmt.Sprintf(" (its own steps at the rate found differed up to %.2f×)", sw)
		}
		res.BasisWords += "; compare the rate found, or a fixed-rate row below it"
		return res, true
	}
	defer func() { res.BasisWords += vsWords(m, ra, rb) }()
	switch {
	case len(va) >= spread.MinTest && len(vb) >= spread.MinTest:
		c := spread.Compare(va, vb, 0)
		res.Basis, res.Tested, res.P, res.Floor = BasisRuns, true, ptr(c.P), 0
		res.gate = true // the test alone decides, after Holm
		res.constant = oneNumber(va, vb)
		setCI(&res, c)
		res.BasisWords = fmt.Sprintf("U test over %s, %s", n(len(va), len(vb), "runs"), pWords(c.P))
	case len(sa) >= spread.MinTest && len(sb) >= spread.MinTest:
		c := spread.Compare(sa, sb, 0)
		res.Basis, res.Tested, res.P = BasisPerSecond, true, ptr(c.P)
		res.SecondsA, res.SecondsB = len(sa), len(sb)
		ga, gb := group(sa), group(sb)
		beyond := math.Abs(res.Change()) > res.Floor
		res.BasisWords = fmt.Sprintf("U test over %s, %s; floor ±%s", n(len(sa), len(sb), "seconds"), pWords(c.P), pct(res.Floor))
		if hl, ok := spread.RatioEstimate(ga, gb); ok {
			// The seconds' typical ratio must say the same: a run's p99
			// can be set by one stalled second.
			if math.Abs(hl-1) <= res.Floor || (hl > 1) != (res.Change() > 0) {
				beyond = false
			}
			if lo, hi, cl, ok := spread.RatioCI(ga, gb); ok {
				res.RatioLo, res.RatioHi, res.CILevel = ptr(lo), ptr(hi), cl
				if r := res.Change() + 1; !math.IsInf(r, 0) && (r < lo || r > hi) {
					res.BasisWords += fmt.Sprintf("; the runs' values are set by a few seconds: the seconds' ratio is %.3f", hl)
				}
			}
		}
		res.gate = beyond // and the test, after Holm
		res.constant = oneNumber(sa, sb)
		if len(va) > 1 && len(vb) > 1 {
			res.BasisWords += fmt.Sprintf(" (%s pooled)", n(len(va), len(vb), "runs"))
			if spread.Tied(va, vb, 0) {
				res.gate = false
				res.BasisWords += "; the runs' ranges overlap"
			}
		}
	case m == Rate && ra.Method == "search" && bracketed(ra) && bracketed(rb):
		// Searches: tied when the brackets their own steps put the
		// boundary in overlap (the precision window, wider where their
		// steps disagreed).
		alo, ahi := brackets(ra)
		blo, bhi := brackets(rb)
		res.Basis = BasisValues
		res.Different = alo > bhi || blo > ahi
		if alo > 0 && !math.IsInf(ahi, 0) {
			res.BoundLo, res.BoundHi = ptr(blo/ahi), ptr(bhi/alo)
		}
		what := "one search each"
		if len(va) > 1 || len(vb) > 1 {
			what = n(len(va), len(vb), "searches")
		}
		res.BasisWords = fmt.Sprintf("no test: %s; tied when the searches' brackets overlap: A %s–%s, B %s–%s req/s (last pass to first fail, precision ±%s, wider where a search's steps disagreed)",
			what, units.Rate(alo), units.Rate(ahi), units.Rate(blo), units.Rate(bhi), pct(res.Floor))
	default:
		c := spread.Compare(va, vb, res.Floor)
		res.Basis = BasisValues
		res.Different = !c.Tied
		setCI(&res, c)
		what := "one run each"
		if len(va) > 1 || len(vb) > 1 {
			what = n(len(va), len(vb), "runs") + ", their ranges"
		}
		why := ""
		if m == Rate && ra.Method == "search" {
			why = " (the search's precision)"
		}
		res.BasisWords = fmt.Sprintf("no test: %s, floor ±%s%s", what, pct(res.Floor), why)
	}
	res.setVerdict() // a tested metric's again after holmRow
	return res, true
}

// vsWords shows, for a row's rate, both sides' values over the control
// of their own round (vs_control) where both have two or more rounds of
// them. They are shown, not judged: on the 2-core development VM the
// control's closed loop (the generator against loadlab serve) moved 30%
// between two back-to-back make lab runs (58,010 and 75,436 2xx/s, steal
// median 0.5% and 3.5%) while the proxies' medians moved -11% to +8%: the
// drift did not move the proxies and the control alike, and dividing by
// the control added its noise to every row.
func vsWords(m Metric, ra, rb *Row) string {
	if m != Rate || ra.VsMetric != Rate || rb.VsMetric != Rate || len(ra.Vs) < 2 || len(rb.Vs) < 2 {
		return ""
	}
	sa, sb := spread.Of(ra.Vs), spread.Of(rb.Vs)
	return fmt.Sprintf("; over each round's control (vs_control, shown, not judged): A %.3g (%.3g–%.3g), B %.3g (%.3g–%.3g)", sa.Median, sa.Min, sa.Max, sb.Median, sb.Min, sb.Max)
}

// swing is the largest spread of metric m among a search row's own steps
// at its rate found (1 when no run repeated a rate).
func swing(r *Row, m Metric) float64 {
	sw := 1.0
	for _, run := range r.Runs {
		if v, ok := run.vals[m]; ok {
			sw = max(sw, v.repeat)
		}
	}
	return sw
}

// bracketed reports whether every search of r carries its bracket.
func bracketed(r *Row) bool {
	for _, run := range r.Runs {
		if v := run.vals[Rate]; v.ok && (v.lo <= 0 || v.hi <= 0) {
			return false
		}
	}
	return len(r.Runs) > 0
}

// brackets is the span of r's searches' brackets.
func brackets(r *Row) (lo, hi float64) {
	lo = math.Inf(1)
	for _, run := range r.Runs {
		if v := run.vals[Rate]; v.ok {
			lo, hi = min(lo, v.lo), max(hi, v.hi)
		}
	}
	return lo, hi
}

// ratesFound are the rates a search row's runs found, sorted.
func ratesFound(r *Row) []float64 {
	v, _ := values(r, Rate)
	slices.Sort(v)
	return v
}

func rateList(v []float64) string {
	var s []string
	for _, x := range v {
		s = append(s, units.Rate(x))
	}
	return strings.Join(s, ", ")
}

// direction is the verdict word for B above (up) or below A.
func direction(m Metric, up bool) string {
	switch m {
	case Rate:
		if up {
			return Faster
		}
		return Slower
	case P50, P99, P999:
		if up {
			return Slower
		}
		return Faster
	}
	if up {
		return Higher
	}
	return Lower
}

func setCI(res *Result, c spread.Comparison) {
	if c.HasRatioCI {
		res.RatioLo, res.RatioHi, res.CILevel = ptr(c.RatioLo), ptr(c.RatioHi), c.RatioCL
	}
}

// group averages xs in consecutive groups so that at most about
// maxSeconds remain (the ratio interval sorts every pair).
func group(xs []float64) []float64 {
	if len(xs) <= maxSeconds {
		return xs
	}
	k := (len(xs) + maxSeconds - 1) / maxSeconds
	var out []float64
	for i := 0; i < len(xs); i += k {
		chunk := xs[i:min(i+k, len(xs))]
		sum := 0.0
		for _, x := range chunk {
			sum += x
		}
		out = append(out, sum/float64(len(chunk)))
	}
	return out
}

func ptr(f float64) *float64 { return &f }

// pWords writes a test's p: "p=0.042", "p<0.001".
func pWords(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

// pct writes a share as a percentage: 0.1 -> "10%", 0.075 -> "7.5%".
func pct(f float64) string {
	s := fmt.Sprintf("%.1f", 100*f)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + "%"
}

// Summary counts the rows compared, those within noise on every metric,
// and those only on one side. Its family is the whole comparison: a
// tested metric counts as different only when it survives Holm across
// every test of the comparison (DifferentAll).
func (r *Report) Summary() (compared, quiet, onlyOne int) {
	for _, row := range r.Rows {
		if row.Only != "" {
			onlyOne++
			continue
		}
		compared++
		if !slices.ContainsFunc(row.Metrics, func(m Result) bool { return m.DifferentAll }) {
			quiet++
		}
	}
	return compared, quiet, onlyOne
}
