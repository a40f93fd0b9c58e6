package run

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/pin"
)

// The machine's wake floor.
//
// A loop that sleeps until a request's intended time can send it no earlier
// than the kernel wakes the loop's thread. On a quiet host that takes tens
// of microseconds; on a busy hypervisor a sleeping vCPU can take
// milliseconds to run again, and then every sleeping program on the
// machine wakes late, loadlab or not. When the lag rule fires, the run
// measures that floor right after it ends: bare sleeps of WakeProbeSleep
// on each of the run's CPUs, on threads pinned there with the loops' timer
// slack, nothing else. The reason then says whether the machine's own
// lateness explains the generator's: the numbers are inflated by the lag
// either way (the run stays a bottleneck), but the remedy differs. The
// probe follows the run: a host whose lateness comes in bursts (this
// kind of VM: a bare sleep's p95 overshoot moved between 0.15 and 1.7 ms
// from one minute to the next) may have been quiet by then, so a floor
// that does not explain the lag says so with that caveat.
//
// Config.WakeProbe measures the floor during the run instead, through the
// measured window, whether the lag rule fires or not: the same sleeps on a
// thread beside each loop on its CPU (a wakeup a millisecond, about half a
// percent of a core). Then the floor and the lag are of the same moments
// (the lab records it for every step); a loop busy on its CPU delays the
// probe's wakeups too, which the busy rule seconds on its own.

// WakeProbeSleep is each probe sleep; WakeProbeSleeps the sleeps per CPU.
const (
	WakeProbeSleep  = time.Millisecond
	WakeProbeSleeps = 250
	// WakeFloorShare is the share of the generator's lag at the judged
	// quantile the machine's own lateness must reach to explain it: the
	// loops' wakeups take a hop or two more than a bare sleep (the
	// HTTP/3 loop's netpoller, a worker), each as late on a late host.
	WakeFloorShare = 0.5
)

// probeWakeFloor sleeps n times for d on each CPU of cpus at once, each on
// a thread of its own pinned there (a CPU it may not pin to is probed
// unpinned), and returns the overshoot's distribution. It takes about
// n x d.
func probeWakeFloor(cpus []int, n int, d time.Duration) measuredFloor {
	p := startWakeProbe(cpus, d, n, time.Time{}, time.Time{})
	return p.wait()
}

// wakeProbe is a probe in progress: a pinned thread per CPU that sleeps d
// over and over, n times (0: until stop or until), and records the
// overshoot of each sleep that began at from or later. Not safe for
// concurrent use but for stop.
type wakeProbe struct {
	cpus []int
	d    time.Duration
	h    *hdr.Histogram
	mu   sync.Mutex
	wg   sync.WaitGroup
	quit chan struct{}
	once sync.Once
	held int // Ps the sleepers hold (HoldPs)
}

// startWakeProbe starts the threads of a probe (see wakeProbe); until, if
// set, is when they stop by themselves.
func startWakeProbe(cpus []int, d time.Duration, n int, from, until time.Time) *wakeProbe {
	p := &wakeProbe{cpus: append([]int(nil), cpus...), d: d, h: newHist(), quit: make(chan struct{})}
	targets := cpus
	if len(targets) == 0 {
		targets = []int{-1}
	}
	p.held = len(targets)
	HoldPs(p.held)
	for _, cpu := range targets {
		p.wg.Add(1)
		go p.sleeper(cpu, n, from, until)
	}
	return p
}

func (p *wakeProbe) sleeper(cpu, n int, from, until time.Time) {
	defer p.wg.Done()
	// Locked and never unlocked: the runtime discards the pinned thread
	// when this goroutine ends.
	runtime.LockOSThread()
	if cpu >= 0 {
		pin.PinThread(cpu) //nolint:errcheck // probed unpinned if the CPU is not ours to pin
	}
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) //nolint:errcheck // the loops' slack (tcploop.go); the default 50 µs otherwise
	h := newHist()
	for i := 0; n <= 0 || i < n; i++ {
		if p.stopped() {
			break
		}
		t0 := time.Now()
		if !until.IsZero() && t0.Add(p.d).After(until) {
			break
		}
		ts := unix.NsecToTimespec(int64(p.d))
		// Raw: the thread keeps its P through the sleep (HoldPs counted
		// it), so the overshoot is the kernel's wakeup, not a wait for
		// the Go scheduler to give the thread a P back.
		for {
			_, _, e := unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), uintptr(unsafe.Pointer(&ts)), 0)
			if e != unix.EINTR {
				break
			}
		}
		if !t0.Before(from) {
			record(h, max(int64(time.Since(t0)-p.d)/1000, 0))
		}
	}
	p.mu.Lock()
	p.h.Merge(h)
	p.mu.Unlock()
}

func (p *wakeProbe) stopped() bool {
	select {
	case <-p.quit:
		return true
	default:
		return false
	}
}

// stop ends the probe's sleeps after the one in progress (safe to call
// more than once, and from another goroutine).
func (p *wakeProbe) stop() { p.once.Do(func() { close(p.quit) }) }

// wait waits for the probe's threads to end and returns what they saw.
func (p *wakeProbe) wait() measuredFloor {
	p.wg.Wait()
	ReleasePs(p.held)
	h := p.h
	return measuredFloor{WakeFloor: &result.WakeFloor{
		CPUs: p.cpus, Sleeps: h.TotalCount(), SleepUs: p.d.Microseconds(),
		P50us: h.ValueAtQuantile(50), P95us: h.ValueAtQuantile(95), P99us: h.ValueAtQuantile(99), Maxus: h.Max(),
	}, hist: h}
}

// noteWakeFloor judges f against the lag quantile the verdict found
// material (j.fired) and says so in g's reason.
func (j *lagJudge) noteWakeFloor(g *result.Generator, m measuredFloor) {
	q, f := j.fired, m.WakeFloor
	if q == nil || f == nil || m.hist == nil || m.hist.TotalCount() == 0 {
		return
	}
	f.Quantile, f.LagUs = q.name, q.beyond
	f.AtQuantileUs = m.hist.ValueAtQuantile(100 * (1 - q.tail))
	f.Explains = float64(f.AtQuantileUs) >= WakeFloorShare*float64(q.beyond)
	g.WakeFloor = f
	probe := fmt.Sprintf("bare %s sleeps on CPUs %s overshot p50 %s, p95 %s, p99 %s (%d sleeps), %s at %s",
		units.Micros(f.SleepUs), cpuList(f.CPUs), units.Micros(f.P50us), units.Micros(f.P95us), units.Micros(f.P99us), f.Sleeps, units.Micros(f.AtQuantileUs), q.name)
	when, passed := "just after the run", ", or the host's in a burst that had passed (run again and compare)"
	if f.During {
		when, passed = "during the run", ""
	}
	if f.Explains {
		g.Reason += fmt.Sprintf("; this machine wakes sleeping threads late itself: %s, %s, %.0f%% of the generator's lag there: the host (a busy hypervisor, the kernel's timers), not loadlab's loops, made most of that lateness; a quieter or dedicated machine measures lower",
			when, probe, 100*float64(f.AtQuantileUs)/float64(max(q.beyond, 1)))
		return
	}
	g.Reason += fmt.Sprintf("; the machine itself woke on time %s (%s): the lateness was the generator's own (give it more CPUs or lower the load)%s", when, probe, passed)
}

// cpuList prints CPUs as a cpuset list ("0-1").
func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "(any)"
	}
	return pin.NewCPUSet(cpus...).String()
}

// measuredFloor is a wake floor as measured, with its distribution (to
// judge it at the lag's quantile).
type measuredFloor struct {
	*result.WakeFloor
	hist *hdr.Histogram
}
