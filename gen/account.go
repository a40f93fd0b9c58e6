package gen

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

// cpuShare is a loop's (or a CPU's) account as fractions of wall time.
type cpuShare struct {
	busy    float64
	wait    float64 // runnable, not running
	softirq float64 // the CPU's, context only (see above)
	steal   float64 // the CPU's, context only
	cpuS    float64 // CPU seconds used
}

// split returns busy, starved and idle: disjoint and adding up to 1. Reads
// taken a moment apart can make busy + wait exceed the wall time by a
// little (or, for a CPU's threads, several waiting at once, by a lot):
// busy is capped at 1 and starved at what busy leaves.
func (s cpuShare) split() (busy, starved, idle float64) {
	busy = min(max(s.busy, 0), 1)
	starved = min(max(s.wait, 0), 1-busy)
	return busy, starved, 1 - busy - starved
}

func (s cpuShare) starved() float64 {
	_, st, _ := s.split()
	return st
}

func (s cpuShare) idle() float64 {
	_, _, id := s.split()
	return id
}

// threadAccount samples one pinned loop thread at the start and the end of
// the measured window. begin and end must run on the loop's own thread.
// Not safe for concurrent use.
type threadAccount struct {
	cpu    int
	stat   *pin.StatReader
	t0, t1 accountSample
}

type accountSample struct {
	at      time.Time
	thread  time.Duration // thread CPU time
	sched   pin.SchedStat
	cpu     pin.CPUTimes
	schedOK bool
	cpuOK   bool
}

// init prepares the account of a thread pinned to cpu (at loop setup: it
// allocates the /proc/stat buffer).
func (a *threadAccount) init(cpu int) {
	a.cpu = cpu
	a.stat = pin.NewStatReader()
}

func (a *threadAccount) begin() { a.t0 = a.sample() }
func (a *threadAccount) end()   { a.t1 = a.sample() }

func (a *threadAccount) sample() accountSample {
	s := accountSample{at: time.Now()}
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

// share returns the account over the window begin..end.
func (a *threadAccount) share() cpuShare {
	wall := a.t1.at.Sub(a.t0.at).Seconds()
	if wall <= 0 || a.t0.at.IsZero() {
		return cpuShare{}
	}
	s := cpuShare{cpuS: (a.t1.thread - a.t0.thread).Seconds()}
	s.busy = s.cpuS / wall
	if a.t0.schedOK && a.t1.schedOK {
		s.wait = (a.t1.sched.Wait - a.t0.sched.Wait).Seconds() / wall
	}
	if a.t0.cpuOK && a.t1.cpuOK {
		s.softirq = (a.t1.cpu.SoftIRQ - a.t0.cpu.SoftIRQ).Seconds() / wall
		s.steal = (a.t1.cpu.Steal - a.t0.cpu.Steal).Seconds() / wall
	}
	return s
}

// processAccount is the HTTP/3 engine's account: quic-go's goroutines run on
// whichever of the run's threads is free and those threads move between the
// run's CPUs, so no thread stands for one CPU. It samples every thread of
// the process periodically and attributes each thread's run and wait time
// since the previous sample to the CPU it is on now; each CPU of the run is
// then judged on its own (one saturated CPU of four is not an average of
// 25%); threads waiting at once on one CPU count once (split). Softirq and
// steal (context) come from /proc/stat per CPU.
type processAccount struct {
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

func newProcessAccount(cpus pin.CPUSet, every time.Duration) *processAccount {
	return &processAccount{cpus: cpus, every: every, stat: pin.NewStatReader(),
		c0: make([]pin.CPUTimes, len(cpus)), c1: make([]pin.CPUTimes, len(cpus)),
		prev: map[int]pin.SchedStat{}, run: make([]time.Duration, len(cpus)), wait: make([]time.Duration, len(cpus))}
}

// begin starts the window: the first sample and the sampler goroutine
// (none when every is 0: the account is then the difference of the first
// and last samples: exact when the run has one CPU, but for threads that
// exit in between).
func (p *processAccount) begin() {
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

// end closes the window with a last sample. Call it once, after begin.
func (p *processAccount) end() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.sample(true)
	p.t1 = time.Now()
	p.cpuOK = p.cpuOK && p.stat.ReadAll(p.cpus, p.c1) == nil
}

func (p *processAccount) sample(attribute bool) {
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

// shares returns each CPU's account over the window.
func (p *processAccount) shares() []cpuShare {
	out := make([]cpuShare, len(p.cpus))
	wall := p.t1.Sub(p.t0).Seconds()
	if wall <= 0 {
		return out
	}
	for i := range p.cpus {
		s := cpuShare{cpuS: p.run[i].Seconds()}
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
