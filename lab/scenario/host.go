package scenario

import (
	"fmt"
	"time"

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
}

// hostMark is a reading of hostClock.
type hostMark struct {
	at            time.Time
	steal, iowait time.Duration
	ok            bool
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
	m := hostMark{at: time.Now()}
	if err := h.r.ReadAll(h.cpus, h.buf); err != nil {
		return m
	}
	for _, t := range h.buf {
		m.steal += t.Steal
		m.iowait += t.IOWait
	}
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
	total := float64(wall) * float64(h.cpus.Len())
	return &results.HostCPU{CPUs: h.cpus.Len(), Steal: float64(b.steal-a.steal) / total, IOWait: float64(b.iowait-a.iowait) / total}
}

// markNoisy flags a step whose host took more than results.NoisySteal of
// the lab's CPUs while it measured.
func markNoisy(st *results.Step) {
	st.Noisy, st.NoisyWhy = false, ""
	if st.Host != nil && st.Host.Steal > results.NoisySteal {
		st.Noisy = true
		st.NoisyWhy = fmt.Sprintf("the host stole %.1f%% of the lab's %d CPUs during the step (above %.0f%%)", 100*st.Host.Steal, st.Host.CPUs, 100*results.NoisySteal)
	}
}
