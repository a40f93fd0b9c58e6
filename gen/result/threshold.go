package result

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/internal/units"
)

// Thresholds are pass/fail checks of a run's result, for CI (k6 calls them
// thresholds): "p99<50ms", "errors<1%", "rate>=97%". The lab's rate search
// judges its steps with the same checks (lab/search.Judge), so a step's
// pass rules and a CI run's are written and evaluated one way.
//
// A threshold is METRIC OP VALUE, OP one of < <= > >=:
//
//	p50 p90 p95 p99 p99.9 max mean   corrected latency (latency_us), VALUE a duration: 50ms, 1.5s, 800us
//	errors                           requests that failed or were not 2xx: a share (1%) or a count (10)
//	rate                             2xx/s delivered (achieved_rate): a share of the offered rate (97%), or req/s (5000)
//
// A run without any request in its measured window fails every threshold:
// there is nothing to judge, and a CI check must not pass on nothing.

// ThresholdMetric is what a threshold reads.
type ThresholdMetric string

// The metrics a threshold can read.
const (
	MetricP50    ThresholdMetric = "p50"
	MetricP90    ThresholdMetric = "p90"
	MetricP95    ThresholdMetric = "p95"
	MetricP99    ThresholdMetric = "p99"
	MetricP999   ThresholdMetric = "p99.9"
	MetricMax    ThresholdMetric = "max"
	MetricMean   ThresholdMetric = "mean"
	MetricErrors ThresholdMetric = "errors"
	MetricRate   ThresholdMetric = "rate"
)

// latency reports whether m is a latency (its value a duration).
func (m ThresholdMetric) latency() bool { return m != MetricErrors && m != MetricRate }

// thresholdMetrics lists the metrics as they are written, for parsing and
// for the error that names them.
var thresholdMetrics = []ThresholdMetric{MetricP50, MetricP90, MetricP95, MetricP99, MetricP999, MetricMax, MetricMean, MetricErrors, MetricRate}

// Threshold is one parsed check. Build it with ParseThreshold, or directly
// (the lab does, from its plan's pass rules).
type Threshold struct {
	Metric ThresholdMetric
	Op     string // "<", "<=", ">" or ">="
	// Limit is in the metric's unit: µs for a latency; a share (0.01 = 1%)
	// when Share is set; else a count (errors) or requests/s (rate).
	Limit float64
	// Share: errors as a share of the requests, rate as a share of the
	// offered rate.
	Share bool
}

// maxThresholdLen bounds a threshold expression (a typo, not a program).
const maxThresholdLen = 64

// ParseThreshold parses METRIC OP VALUE, e.g. "p99<50ms", "errors < 1%",
// "rate>=97%", "rate>=5000".
func ParseThreshold(s string) (Threshold, error) {
	bad := func(format string, args ...any) (Threshold, error) {
		return Threshold{}, fieldErr("Thresholds", "bad threshold %q: %s", s, fmt.Sprintf(format, args...))
	}
	if len(s) > maxThresholdLen {
		return bad("longer than %d characters", maxThresholdLen)
	}
	e := strings.TrimSpace(s)
	i := strings.IndexAny(e, "<>")
	if i < 0 {
		return bad("give METRIC OP VALUE, e.g. p99<50ms, errors<1%%, rate>=97%%")
	}
	var t Threshold
	name := strings.ToLower(strings.TrimSpace(e[:i]))
	for _, m := range thresholdMetrics {
		if name == string(m) || m == MetricP999 && name == "p999" {
			t.Metric = m
		}
	}
	if t.Metric == "" {
		names := make([]string, len(thresholdMetrics))
		for i, m := range thresholdMetrics {
			names[i] = string(m)
		}
		return bad("unknown metric %q: use one of %s", name, strings.Join(names, ", "))
	}
	t.Op = e[i : i+1]
	rest := e[i+1:]
	if strings.HasPrefix(rest, "=") {
		t.Op += "="
		rest = rest[1:]
	}
	val := strings.TrimSpace(rest)
	if val == "" {
		return bad("no value after %s", t.Op)
	}
	switch {
	case t.Metric.latency():
		d, err := time.ParseDuration(strings.ReplaceAll(val, "µ", "u"))
		if err != nil || d < 0 {
			return bad("%s needs a duration such as 50ms, 1.5s or 800us", t.Metric)
		}
		t.Limit = float64(d) / float64(time.Microsecond)
	case strings.HasSuffix(val, "%"):
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(val, "%")), 64)
		if err != nil || !(f >= 0 && f <= 100) {
			return bad("a share must be between 0%% and 100%%")
		}
		t.Limit, t.Share = f/100, true
	default:
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || !(f >= 0) || math.IsInf(f, 0) {
			what := "a count of requests such as 10, or a share such as 1%"
			if t.Metric == MetricRate {
				what = "requests/s such as 5000, or a share of the offered rate such as 97%"
			}
			return bad("%s needs %s", t.Metric, what)
		}
		t.Limit = f
	}
	return t, nil
}

// ParseThresholds parses each of exprs.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	ts := make([]Threshold, 0, len(exprs))
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// String writes the threshold back in the form ParseThreshold reads.
func (t Threshold) String() string { return string(t.Metric) + t.Op + t.limitString() }

func (t Threshold) limitString() string {
	switch {
	case t.Metric.latency():
		return time.Duration(math.Round(t.Limit * float64(time.Microsecond))).String()
	case t.Share:
		return strconv.FormatFloat(t.Limit*100, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(t.Limit, 'f', -1, 64)
}

// NeedsOffered reports whether the threshold needs an offered rate (open
// loop) to mean anything.
func (t Threshold) NeedsOffered() bool { return t.Metric == MetricRate && t.Share }

// Observed is what thresholds read from a result.
type Observed struct {
	Latency  Latency // corrected, µs
	Requests uint64  // owed in the measured window: ok + non-2xx + errors
	OK       uint64  // 2xx
	Offered  float64 // requests/s offered (0: closed loop)
	Achieved float64 // 2xx/s delivered
}

// ObservedOf reads the observed values of r.
func ObservedOf(r *Result) Observed {
	return Observed{Latency: r.Latency, Requests: r.Requests, OK: r.OK, Offered: r.RequestedRate, Achieved: r.AchievedRate}
}

// ErrorShare is the share of the requests that failed or were not 2xx.
func (o Observed) ErrorShare() float64 {
	if o.Requests == 0 {
		return 0
	}
	return float64(o.Requests-min(o.OK, o.Requests)) / float64(o.Requests)
}

// Check evaluates t on o. A share of the offered rate in closed loop
// (Offered 0) has nothing to compare with and passes, noted in Reason (the
// CLI refuses such a threshold before the run).
func (t Threshold) Check(o Observed) ThresholdResult {
	r := ThresholdResult{Threshold: t.String(), Metric: string(t.Metric), Limit: t.Limit}
	if o.Requests == 0 {
		r.Reason = "no requests in the measured window to judge"
		return r
	}
	var show func(float64) string
	switch t.Metric {
	case MetricErrors:
		if t.Share {
			r.Value = o.ErrorShare()
			show = func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }
		} else {
			r.Value = float64(o.Requests - min(o.OK, o.Requests))
			show = func(v float64) string { return units.Int(int64(v)) }
		}
	case MetricRate:
		if t.Share {
			if o.Offered <= 0 {
				r.Pass, r.Reason = true, "closed loop: no offered rate to compare with, not judged"
				return r
			}
			r.Value = o.Achieved / o.Offered
		} else {
			r.Value = o.Achieved
			show = func(v float64) string { return units.Rate(v) + "/s" }
		}
	default:
		r.Value = float64(latencyAt(o.Latency, t.Metric))
		show = func(v float64) string { return units.Micros(int64(math.Round(v))) }
	}
	r.Pass = compare(r.Value, t.Op, t.Limit)
	if r.Pass {
		return r
	}
	if t.NeedsOffered() {
		// The lab's wording since seed 002: what was delivered, of what.
		r.Reason = fmt.Sprintf("delivered %s/s, %.1f%% of %s/s offered (%s %s%%)", units.Rate(o.Achieved), 100*r.Value,
			units.Rate(o.Offered), negate(t.Op), strconv.FormatFloat(100*t.Limit, 'f', -1, 64))
		return r
	}
	r.Reason = fmt.Sprintf("%s %s %s %s", t.Metric, show(r.Value), negate(t.Op), show(t.Limit))
	return r
}

// latencyAt returns the latency metric m of l, µs.
func latencyAt(l Latency, m ThresholdMetric) int64 {
	switch m {
	case MetricP50:
		return l.P50
	case MetricP90:
		return l.P90
	case MetricP95:
		return l.P95
	case MetricP99:
		return l.P99
	case MetricP999:
		return l.P999
	case MetricMax:
		return l.Max
	}
	return int64(math.Round(l.Mean))
}

func compare(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case ">":
		return v > limit
	}
	return v >= limit
}

// negate is the operator that held when op did not.
// KnownOp reports whether t's operator is one Check judges.
func (t Threshold) KnownOp() bool { return negate(t.Op) != "" }

func negate(op string) string {
	return map[string]string{"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
}

// CheckThresholds evaluates ts on r and reports whether all passed.
func CheckThresholds(ts []Threshold, r *Result) ([]ThresholdResult, bool) {
	o := ObservedOf(r)
	out := make([]ThresholdResult, 0, len(ts))
	pass := true
	for _, t := range ts {
		tr := t.Check(o)
		pass = pass && tr.Pass
		out = append(out, tr)
	}
	return out, pass
}

// ThresholdsFailed reports whether any of r's thresholds failed.
func (r *Result) ThresholdsFailed() bool {
	for _, t := range r.Thresholds {
		if !t.Pass {
			return true
		}
	}
	return false
}
