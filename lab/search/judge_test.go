package search

import (
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

var seedCriteria = Criteria{P95: 500 * time.Millisecond, P99: time.Second, MaxErrors: 0.01, MinAchieved: 0.97}

func TestJudge(t *testing.T) {
	good := Measure{Offered: 1000, Achieved: 990, Requests: 24000, OK: 24000, P95us: 2000, P99us: 5000}
	for _, tc := range []struct {
		name    string
		mut     func(*Measure)
		verdict Verdict
		reason  string
	}{
		{"pass", func(*Measure) {}, Pass, ""},
		{"p95", func(m *Measure) { m.P95us = 500_000 }, Fail, "p95 500 ms >= 500 ms"},
		{"p99", func(m *Measure) { m.P99us = 1_200_000 }, Fail, "p99 1.20 s >= 1.00 s"},
		{"errors", func(m *Measure) { m.OK = 23700 }, Fail, "errors 1.25% >= 1.00%"},
		{"just under 1% errors", func(m *Measure) { m.OK = 23761 }, Pass, ""},
		{"delivered", func(m *Measure) { m.Achieved = 960 }, Fail, "delivered 960/s, 96.0% of 1,000/s offered"},
		{"closed loop has no delivery check", func(m *Measure) { m.Offered = 0; m.Achieved = 1 }, Pass, ""},
		{"nothing", func(m *Measure) { m.Requests, m.OK, m.Achieved = 0, 0, 0 }, Fail, "no responses"},
		{"generator", func(m *Measure) { m.P99us = 2_000_000; m.GenBottleneck = true; m.GenReason = "loop 0 busy" }, GenLimited, "generator was the bottleneck: loop 0 busy"},
		{"busy generator but passed", func(m *Measure) { m.GenBottleneck = true }, Pass, ""},
		{"generator late and proxy errors", func(m *Measure) { m.OK = 20000; m.GenBottleneck = true }, Fail, "errors 16.67%"},
		{"generator late and no responses", func(m *Measure) { m.Requests, m.OK, m.Achieved = 0, 0, 0; m.GenBottleneck = true }, Fail, "no responses"},
		{"generator late, delivered less", func(m *Measure) { m.Achieved = 500; m.GenBottleneck = true }, GenLimited, "delivered 500/s"},
	} {
		m := good
		tc.mut(&m)
		o := Judge(seedCriteria, m)
		if o.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s (%v), want %s", tc.name, o.Verdict, o.Reasons, tc.verdict)
		}
		if tc.reason != "" && !strings.Contains(strings.Join(o.Reasons, "; "), tc.reason) {
			t.Errorf("%s: reasons %q lack %q", tc.name, o.Reasons, tc.reason)
		}
		if tc.verdict == Pass && len(o.Reasons) != 0 {
			t.Errorf("%s: pass with reasons %v", tc.name, o.Reasons)
		}
	}
}

func TestMeasureOf(t *testing.T) {
	r := &result.Result{RequestedRate: 500, AchievedRate: 499.5, Requests: 100, OK: 98,
		Latency: result.Latency{P95: 7, P99: 9}, Generator: result.Generator{Bottleneck: true, Reason: "x"}}
	m := MeasureOf(r)
	if m.Offered != 500 || m.Achieved != 499.5 || m.Requests != 100 || m.OK != 98 || m.P95us != 7 || m.P99us != 9 || !m.GenBottleneck || m.GenReason != "x" {
		t.Fatalf("%+v", m)
	}
	if e := m.ErrorShare(); e != 0.02 {
		t.Fatalf("error share %v", e)
	}
}

// max_errors 0 means no error is allowed: a step without errors passes, a
// single failed request fails it.
func TestJudgeZeroErrorsAllowed(t *testing.T) {
	c := Criteria{P95: time.Second, P99: 2 * time.Second, MaxErrors: 0, MinAchieved: 0.9}
	m := Measure{Offered: 100, Achieved: 100, Requests: 1000, OK: 1000, P95us: 1000, P99us: 2000}
	if o := Judge(c, m); o.Verdict != Pass {
		t.Errorf("no errors with max_errors 0: %v %v, want pass", o.Verdict, o.Reasons)
	}
	m.OK = 999
	if o := Judge(c, m); o.Verdict != Fail {
		t.Errorf("1 error in 1000 with max_errors 0: %v, want fail", o.Verdict)
	}
}

// Requests the generator dropped unsent from its full queue while it was
// the bottleneck are its failure, not the proxy's: such a step is
// generator-limited; the proxy's own errors still fail it.
func TestJudgeDroppedByABusyGenerator(t *testing.T) {
	c := Criteria{P95: time.Second, P99: 2 * time.Second, MaxErrors: 0.01, MinAchieved: 0.97}
	m := Measure{Offered: 1000, Achieved: 800, Requests: 10000, OK: 8000, Dropped: 2000, P95us: 1000, P99us: 2000, GenBottleneck: true, GenReason: "busy"}
	if o := Judge(c, m); o.Verdict != GenLimited {
		t.Errorf("drops by a busy generator: %v %v, want gen-limited", o.Verdict, o.Reasons)
	}
	m.Dropped = 1000 // 1,000 other failures are the proxy's
	if o := Judge(c, m); o.Verdict != Fail {
		t.Errorf("the proxy's own 10%% errors beside the drops: %v, want fail", o.Verdict)
	}
	m.Dropped, m.GenBottleneck = 2000, false
	if o := Judge(c, m); o.Verdict != Fail {
		t.Errorf("drops without a busy generator: %v, want fail (the queue filled because the proxy was slow)", o.Verdict)
	}
}
