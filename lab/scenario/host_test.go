package scenario

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

func TestHostShares(t *testing.T) {
	h := &hostClock{cpus: pin.NewCPUSet(0, 1)}
	t0 := time.Unix(1000, 0)
	a := hostMark{at: t0, steal: time.Second, iowait: 0, ok: true}
	b := hostMark{at: t0.Add(10 * time.Second), steal: 2 * time.Second, iowait: 200 * time.Millisecond, ok: true}
	s := h.shares(a, b)
	// 1 s of steal and 0.2 s of iowait over 2 CPUs x 10 s
	if s == nil || s.CPUs != 2 || math.Abs(s.Steal-0.05) > 1e-12 || math.Abs(s.IOWait-0.01) > 1e-12 {
		t.Fatalf("shares %+v", s)
	}
	for _, bad := range []hostMark{{at: b.at}, {at: t0, steal: 2 * time.Second, ok: true}, {at: b.at, ok: true}} {
		if s := h.shares(a, bad); s != nil {
			t.Errorf("shares against %+v: %+v, want none", bad, s)
		}
	}
	var none *hostClock
	if m := none.mark(); m.ok || none.shares(a, b) != nil {
		t.Fatal("a nil clock read something")
	}
	// The real clock reads this machine's /proc/stat.
	if real := newHostClock(); real != nil {
		m0 := real.mark()
		time.Sleep(20 * time.Millisecond)
		if s := real.shares(m0, real.mark()); s == nil || s.Steal < 0 || s.IOWait < 0 {
			t.Fatalf("real shares %+v", s)
		}
	}
}

func TestMarkNoisy(t *testing.T) {
	st := &results.Step{Host: &results.HostCPU{CPUs: 2, Steal: 0.031}}
	markNoisy(st)
	if !st.Noisy || st.NoisyWhy != "the host stole 3.1% of the lab's 2 CPUs during the step (above 2%)" {
		t.Fatalf("3.1%% steal: %v %q", st.Noisy, st.NoisyWhy)
	}
	for _, h := range []*results.HostCPU{nil, {CPUs: 2, Steal: 0.019}, {CPUs: 2, Steal: 0, IOWait: 0.5}} {
		st := &results.Step{Host: h, Noisy: true}
		if markNoisy(st); st.Noisy || st.NoisyWhy != "" {
			t.Errorf("host %+v flagged: %q", h, st.NoisyWhy)
		}
	}
}

// Foreign CPU: the lab's CPUs' busy time less the generator's process and
// the proxy's and backend's cgroups; above results.NoisyForeign the step
// is noisy.
func TestForeignCPU(t *testing.T) {
	h := &hostClock{cpus: pin.NewCPUSet(0, 1)}
	t0 := time.Unix(1000, 0)
	a := hostMark{at: t0, busy: time.Second, self: time.Second, ok: true}
	// over 2 s: 3.6 s busy (1.8 cores), 0.8 s of this process (0.4)
	b := hostMark{at: t0.Add(2 * time.Second), busy: 4600 * time.Millisecond, self: 1800 * time.Millisecond, ok: true}
	st := &results.Step{Host: h.shares(a, b)}
	st.ProxySum.CPUAvg, st.BackendSum.CPUAvg = 0.5, 0.3
	setForeign(st)
	if st.Host == nil || st.Host.Busy != 1.8 || st.Host.Self != 0.4 || math.Abs(st.Host.Foreign-0.6) > 1e-9 {
		t.Fatalf("host %+v", st.Host)
	}
	markNoisy(st)
	if !st.Noisy || !strings.Contains(st.NoisyWhy, "something outside the lab used 0.60 cores of the lab's 2 CPUs") {
		t.Fatalf("0.6 foreign cores: %v %q", st.Noisy, st.NoisyWhy)
	}
	st.ProxySum.CPUAvg = 0.9 // the proxy used most of it: 0.2 is within the measure's noise
	setForeign(st)
	if markNoisy(st); st.Noisy || math.Abs(st.Host.Foreign-0.2) > 1e-9 {
		t.Fatalf("0.2 foreign cores flagged: %+v %q", st.Host, st.NoisyWhy)
	}
}
