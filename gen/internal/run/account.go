package run

import (
	"time"

	"github.com/loadlab/loadlab/pin"
)

// The generator's account of its own CPUs over the measured window.
//
// Wall time splits three ways, disjoint, adding up to 1:
//
//   - busy: the loop's thread ran on its CPU (its own CPU time; on kernels
//     without IRQ time accounting that includes the softirqs that ran in
//     its context, such as loopback delivery of what it sent).
//   - starved: it was runnable but not running although its CPU was meant
//     for it: waiting on the run queue while another task, a softirq or the
//     hypervisor had the CPU (a competing process, the generator's own
//     aggregator, GC or TIME_WAIT scan on that CPU). From schedstat's
//     run_delay, which counts exactly that.
//   - idle: the thread slept: it had nothing to do.
//
// The CPU's softirq and steal time (/proc/stat) are kept beside them as
// context, not added: when the loop wanted to run, they are already in
// starved (or busy); when it slept, they cost it nothing. Adding them
// counted the same time twice (busy 42% + starved 79% in a closed loop on
// both CPUs). busy + starved near 1 means the loop had no time to spare:
// whatever it measured, it may have shaped.

// Split returns busy, starved and idle: disjoint and adding up to 1. Reads
// taken a moment apart can make busy + wait exceed the wall time by a
// little (or, for a CPU's threads, several waiting at once, by a lot):
// busy is capped at 1 and starved at what busy leaves.
func (s CPUShare) Split() (busy, starved, idle float64) {
	busy = min(max(s.busy, 0), 1)
	starved = min(max(s.wait, 0), 1-busy)
	return busy, starved, 1 - busy - starved
}

func (s CPUShare) starved() float64 {
	_, st, _ := s.Split()
	return st
}

func (s CPUShare) idle() float64 {
	_, _, id := s.Split()
	return id
}

// ThreadAccount samples one pinned loop thread at the start and the end of
// the measured window. begin and end must run on the loop's own thread.
// Not safe for concurrent use.
type ThreadAccount struct {
	cpu    int
	stat   *pin.StatReader
	t0, t1 AccountSample
}

// AccountSample is one reading of a thread's account.
type AccountSample struct {
	at      time.Time
	thread  time.Duration // thread CPU time
	sched   pin.SchedStat
	cpu     pin.CPUTimes
	schedOK bool
	cpuOK   bool
}

// IsZero reports whether s was never taken.
func (s AccountSample) IsZero() bool { return s.at.IsZero() }

// Init prepares the account of a thread pinned to cpu (at loop setup: it
// allocates the /proc/stat buffer).
func (a *ThreadAccount) Init(cpu int) {
	a.cpu = cpu
	a.stat = pin.NewStatReader()
}

// Begin and End take the window's first and last samples.
func (a *ThreadAccount) Begin() { a.t0 = a.Sample() }
func (a *ThreadAccount) End()   { a.t1 = a.Sample() }

// Sample reads the thread's account now.
func (a *ThreadAccount) Sample() AccountSample {
	s := AccountSample{at: time.Now()}
	s.thread, _ = pin.ThreadCPUTime()
	var err error
	s.sched, err = pin.ThreadSchedStat()
	s.schedOK = err == nil
	if a.stat != nil {
		s.cpu, err = a.stat.Read(a.cpu)
		s.cpuOK = err == nil
	}
	return s
}

// Share returns the account over the window Begin..End.
func (a *ThreadAccount) Share() CPUShare { return ShareBetween(a.t0, a.t1) }

// ShareBetween is the account between two samples of one thread.
func ShareBetween(t0, t1 AccountSample) CPUShare {
	wall := t1.at.Sub(t0.at).Seconds()
	if wall <= 0 || t0.at.IsZero() {
		return CPUShare{}
	}
	s := CPUShare{cpuS: (t1.thread - t0.thread).Seconds()}
	s.busy = s.cpuS / wall
	if t0.schedOK && t1.schedOK {
		s.wait = (t1.sched.Wait - t0.sched.Wait).Seconds() / wall
	}
	if t0.cpuOK && t1.cpuOK {
		s.softirq = (t1.cpu.SoftIRQ - t0.cpu.SoftIRQ).Seconds() / wall
		s.steal = (t1.cpu.Steal - t0.cpu.Steal).Seconds() / wall
	}
	return s
}

// ProcessAccount is quic-go's HTTP/3 engine's account: quic-go's goroutines run on
// whichever of the run's threads is free and those threads move between the
// run's CPUs, so no thread stands for one CPU. It samples every thread of
// the process periodically and attributes each thread's run and wait time
// since the previous sample to the CPU it is on now; each CPU of the run is
// then judged on its own (one saturated CPU of four is not an average of
// 25%); threads waiting at once on one CPU count once (split). Softirq and
// steal (context) come from /proc/stat per CPU.
type ProcessAccount struct {
	cpus  pin.CPUSet
	every time.Duration

	stat   *pin.StatReader
	c0, c1 []pin.CPUTimes
	t0, t1 time.Time
	cpuOK  bool

	prev  map[int]pin.SchedStat
	tasks []pin.Task
	run   []time.Duration // per CPU of cpus
	wait  []time.Duration

	stop, done chan struct{}
}

// NewProcessAccount returns the account of cpus, sampled every every.
func NewProcessAccount(cpus pin.CPUSet, every time.Duration) *ProcessAccount {
	return &ProcessAccount{cpus: cpus, every: every, stat: pin.NewStatReader(),
		c0: make([]pin.CPUTimes, len(cpus)), c1: make([]pin.CPUTimes, len(cpus)),
		prev: map[int]pin.SchedStat{}, run: make([]time.Duration, len(cpus)), wait: make([]time.Duration, len(cpus))}
}

// Begin starts the window: the first sample and the sampler goroutine
// (none when every is 0: the account is then the difference of the first
// and last samples: exact when the run has one CPU, but for threads that
// exit in between).
func (p *ProcessAccount) Begin() {
	p.t0 = time.Now()
	p.cpuOK = p.stat.ReadAll(p.cpus, p.c0) == nil
	p.sample(false)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	if p.every <= 0 {
		close(p.done)
		return
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.sample(true)
			case <-p.stop:
				return
			}
		}
	}()
}

// End closes the window with a last sample. Call it once, after Begin.
func (p *ProcessAccount) End() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.sample(true)
	p.t1 = time.Now()
	p.cpuOK = p.cpuOK && p.stat.ReadAll(p.cpus, p.c1) == nil
}

func (p *ProcessAccount) sample(attribute bool) {
	var err error
	if p.tasks, err = pin.Tasks(p.tasks); err != nil {
		return
	}
	for _, tk := range p.tasks {
		was, seen := p.prev[tk.TID]
		p.prev[tk.TID] = tk.Sched
		if !attribute {
			continue
		}
		if !seen {
			was = pin.SchedStat{} // started during the window: all of it is in the window
		}
		for i, c := range p.cpus {
			if c == tk.CPU {
				p.run[i] += tk.Sched.Run - was.Run
				p.wait[i] += tk.Sched.Wait - was.Wait
				break
			}
		}
	}
}

// Shares returns each CPU's account over the window.
func (p *ProcessAccount) Shares() []CPUShare {
	out := make([]CPUShare, len(p.cpus))
	wall := p.t1.Sub(p.t0).Seconds()
	if wall <= 0 {
		return out
	}
	for i := range p.cpus {
		s := CPUShare{cpuS: p.run[i].Seconds()}
		s.busy = s.cpuS / wall
		s.wait = p.wait[i].Seconds() / wall
		if p.cpuOK {
			s.softirq = (p.c1[i].SoftIRQ - p.c0[i].SoftIRQ).Seconds() / wall
			s.steal = (p.c1[i].Steal - p.c0[i].Steal).Seconds() / wall
		}
		out[i] = s
	}
	return out
}
