package result

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/internal/fields"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  Threshold
		canon string
	}{
		{"p99<50ms", Threshold{Metric: MetricP99, Op: "<", Limit: 50_000}, "p99<50ms"},
		{" p95 <= 1.5s ", Threshold{Metric: MetricP95, Op: "<=", Limit: 1_500_000}, "p95<=1.5s"},
		{"P99.9<800µs", Threshold{Metric: MetricP999, Op: "<", Limit: 800}, "p99.9<800µs"},
		{"p999<800us", Threshold{Metric: MetricP999, Op: "<", Limit: 800}, "p99.9<800µs"},
		{"errors<1%", Threshold{Metric: MetricErrors, Op: "<", Limit: 0.01, Share: true}, "errors<1%"},
		{"errors<=0", Threshold{Metric: MetricErrors, Op: "<=", Limit: 0}, "errors<=0"},
		{"rate>=97%", Threshold{Metric: MetricRate, Op: ">=", Limit: 0.97, Share: true}, "rate>=97%"},
		{"rate>5000", Threshold{Metric: MetricRate, Op: ">", Limit: 5000}, "rate>5000"},
		{"mean<2ms", Threshold{Metric: MetricMean, Op: "<", Limit: 2000}, "mean<2ms"},
	} {
		got, err := ParseThreshold(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
		if s := got.String(); s != tc.canon {
			t.Errorf("%q: String %q, want %q", tc.in, s, tc.canon)
		}
	}
	for _, in := range []string{"", "p99", "p98<5ms", "p99<", "p99<5", "p99<-5ms", "errors<101%", "errors<x", "rate>=-1", "rate>=NaN", "p99=5ms", "p99<<5ms", strings.Repeat("p", 100) + "<1ms"} {
		if _, err := ParseThreshold(in); err == nil || !fields.IsUsage(err) {
			t.Errorf("%q: err %v, want a usage error", in, err)
		}
	}
}

// Each metric compares the value the result holds, on both sides of the
// limit, and says why it failed.
func TestThresholdCheck(t *testing.T) {
	o := Observed{Latency: Latency{P50: 900, P90: 2000, P95: 3000, P99: 49_999, P999: 80_000, Max: 120_000, Mean: 1500.4},
		Requests: 10_000, OK: 9_900, Offered: 1000, Achieved: 970}
	for _, tc := range []struct {
		expr   string
		pass   bool
		value  float64
		reason string
	}{
		{"p99<50ms", true, 49_999, ""},
		{"p99<49999us", false, 49_999, "p99 50 ms >= 50 ms"},
		{"p99<=49999us", true, 49_999, ""},
		{"p50>1ms", false, 900, "p50 900 µs <= 1.00 ms"},
		{"max<100ms", false, 120_000, "max 120 ms >= 100 ms"},
		{"mean<1.5ms", false, 1500, "mean 1.50 ms >= 1.50 ms"},
		{"errors<1%", false, 0.01, "errors 1.00% >= 1.00%"},
		{"errors<=1%", true, 0.01, ""},
		{"errors<100", false, 100, "errors 100 >= 100"},
		{"errors<101", true, 100, ""},
		{"rate>=97%", true, 0.97, ""},
		{"rate>97%", false, 0.97, "delivered 970/s, 97.0% of 1,000/s offered (<= 97%)"},
		{"rate>=971", false, 970, "rate 970/s < 971/s"},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := th.Check(o)
		if r.Pass != tc.pass || r.Value != tc.value || r.Reason != tc.reason {
			t.Errorf("%s: pass %v value %v reason %q, want %v %v %q", tc.expr, r.Pass, r.Value, r.Reason, tc.pass, tc.value, tc.reason)
		}
	}
	th, _ := ParseThreshold("p99<1s")
	if r := th.Check(Observed{}); r.Pass || !strings.Contains(r.Reason, "no requests") {
		t.Errorf("no requests: %+v, want a failure", r)
	}
	th, _ = ParseThreshold("rate>=97%")
	if r := th.Check(Observed{Requests: 5, OK: 5, Achieved: 5}); !r.Pass || !strings.Contains(r.Reason, "closed loop") {
		t.Errorf("closed loop rate share: %+v, want a pass noted as not judged", r)
	}
}

func TestCheckThresholds(t *testing.T) {
	ts, err := ParseThresholds([]string{"p99<50ms", "errors<1%"})
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Requests: 100, OK: 100, Latency: Latency{P99: 60_000}}
	got, pass := CheckThresholds(ts, res)
	if pass || len(got) != 2 || got[0].Pass || !got[1].Pass {
		t.Fatalf("%+v %v", got, pass)
	}
	res.Thresholds = got
	if !res.ThresholdsFailed() {
		t.Fatal("ThresholdsFailed false with a failed threshold")
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<50ms", "errors<1%", "rate>=97%", "rate>5000", "p99.9 <= 1.5s", "errors<=0", "x", "<", "p99<µ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			if !fields.IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %v is not a one-line usage error", s, err)
			}
			return
		}
		// What String writes parses back to the same check.
		again, err := ParseThreshold(th.String())
		if err != nil {
			t.Fatalf("%q -> %q: %v", s, th.String(), err)
		}
		if again.Metric != th.Metric || again.Op != th.Op || again.Share != th.Share {
			t.Fatalf("%q -> %q: %+v, want %+v", s, th.String(), again, th)
		}
		_ = th.Check(Observed{Requests: 1, OK: 1, Offered: 1, Achieved: 1})
	})
}
