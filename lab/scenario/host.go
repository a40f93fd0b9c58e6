package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/internal/units"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

// hostClock reads the steal and iowait time of the CPUs this process may
// use (/proc/stat), so that each step records how much of the machine the
// host took away while it ran (steal: a hypervisor ran someone else on a
// CPU the lab had; iowait: CPUs idle waiting for I/O). Not safe for
// concurrent use.
type hostClock struct {
	r    *pin.StatReader
	cpus pin.CPUSet
	buf  []pin.CPUTimes
	read func() hostMark // replaces the reading (tests)
}

// newHost makes the runner's host clock (tests replace it).
var newHost = newHostClock

// hostMark is a reading of hostClock: the CPUs' steal, iowait and busy
// time, and the CPU time of this process (the generator runs in it).
type hostMark struct {
	at                  time.Time
	steal, iowait, busy time.Duration
	self                time.Duration
	ok                  bool
}

// newHostClock returns a clock over the allowed CPUs, or nil when they
// cannot be read (the steps then record no host times).
func newHostClock() *hostClock {
	cpus, err := pin.Allowed()
	if err != nil || cpus.Len() == 0 {
		return nil
	}
	h := &hostClock{r: pin.NewStatReader(), cpus: cpus, buf: make([]pin.CPUTimes, cpus.Len())}
	if !h.mark().ok {
		return nil
	}
	return h
}

func (h *hostClock) mark() hostMark {
	if h == nil {
		return hostMark{}
	}
	if h.read != nil {
		return h.read()
	}
	m := hostMark{at: time.Now()}
	if err := h.r.ReadAll(h.cpus, h.buf); err != nil {
		return m
	}
	for _, t := range h.buf {
		m.steal += t.Steal
		m.iowait += t.IOWait
		m.busy += t.Busy + t.SoftIRQ // softirq run in a task's context is charged to its cgroup
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return m
	}
	m.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	m.ok = true
	return m
}

// hostShares is the steal and iowait between two marks, as shares of the
// CPUs' time (nil when either mark failed or no time passed).
func (h *hostClock) shares(a, b hostMark) *results.HostCPU {
	wall := b.at.Sub(a.at)
	if h == nil || !a.ok || !b.ok || wall <= 0 || b.steal < a.steal || b.iowait < a.iowait {
		return nil
	}
	if h.cpus.Len() == 0 {
		return nil
	}
	total := float64(wall) * float64(h.cpus.Len())
	return &results.HostCPU{CPUs: h.cpus.Len(), Steal: float64(b.steal-a.steal) / total, IOWait: float64(b.iowait-a.iowait) / total,
		Busy: units.Round3(float64(b.busy-a.busy) / float64(wall)), Self: units.Round3(float64(b.self-a.self) / float64(wall))}
}

// setForeign records the CPU the lab's CPUs spent on something other than
// the lab: their busy time (softirq included) less the generator's process and the proxy's
// and the backend's cgroups (cores, over the step; the cgroups' averages
// are over the measured window, so a few hundredths either way are the
// sampling's).
func setForeign(st *results.Step) {
	if st.Host == nil || st.Host.Busy == 0 {
		return
	}
	st.Host.Foreign = units.Round3(st.Host.Busy - st.Host.Self - st.ProxySum.CPUAvg - st.BackendSum.CPUAvg)
}

// markNoisy flags a step whose host took more than results.NoisySteal of
// the lab's CPUs while it measured, or during which something outside the
// lab used more than results.NoisyForeign cores of them.
func markNoisy(st *results.Step) {
	st.Noisy, st.NoisyWhy = false, ""
	if st.Host == nil {
		return
	}
	var why []string
	if st.Host.Steal > results.NoisySteal {
		why = append(why, fmt.Sprintf("the host stole %.1f%% of the lab's %d CPUs during the step (above %.0f%%)", 100*st.Host.Steal, st.Host.CPUs, 100*results.NoisySteal))
	}
	if st.Host.Foreign > results.NoisyForeign {
		why = append(why, fmt.Sprintf("something outside the lab used %.2f cores of the lab's %d CPUs during the step (above %.2f)", st.Host.Foreign, st.Host.CPUs, results.NoisyForeign))
	}
	if len(why) > 0 {
		st.Noisy, st.NoisyWhy = true, strings.Join(why, "; ")
	}
}
