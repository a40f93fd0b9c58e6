package watch

import (
	"fmt"
	"sync"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
)

// Sample is one reading of a group.
type Sample struct {
	T          time.Duration // since Start
	CPUCores   float64       // CPU cores busy on average since the previous sample
	MemCurrent uint64        // memory charged to the group (memory.current / usage_in_bytes), page cache included
	MemAnon    uint64        // anonymous memory
	MemKernel  uint64        // kernel memory (slab, stacks, socket buffers)
	MemFile    uint64        // page cache
	MemPeak    uint64        // highest charge so far
	TimeWait   int           // TIME_WAIT sockets; -1 if not counted or the count failed
	Procs      int           // processes in the group
	Threads    int           // threads in the group

	// CFS bandwidth: the quota read back (cores, 0 = none) and, since
	// the previous sample, the periods the group ran in, those it was
	// throttled in and how long it waited.
	CPUQuota       float64
	NrPeriods      uint64
	NrThrottled    uint64
	ThrottledNanos uint64
}

// Watcher samples one group on a ticker until Stop.
type Watcher struct {
	g        cgroup.Group
	timeWait func() (int, error)
	every    time.Duration
	start    time.Time

	mu      sync.Mutex
	samples []Sample
	err     error
	prevCPU uint64
	prevT   time.Duration
	prevBW  cgroup.Stats // the bandwidth counters of the previous reading

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Start samples g every interval (1 s if every <= 0) until Stop. g may be
// nil (only TIME_WAIT is sampled); timeWait may be nil (TimeWait is -1),
// e.g. netns.Lab.TimeWait bound to a role, or netns.HostTimeWait bound to
// the proxy's backend port. The first sample comes one interval after Start.
func Start(g cgroup.Group, timeWait func() (int, error), every time.Duration) *Watcher {
	if every <= 0 {
		every = time.Second
	}
	w := &Watcher{g: g, timeWait: timeWait, every: every, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if g != nil {
		if st, err := g.Stats(); err == nil {
			w.prevCPU, w.prevBW = st.CPUNanos, st
		} else {
			w.err = fmt.Errorf("watch %s: %v", g.Name(), err)
		}
	}
	go w.loop()
	return w
}

func (w *Watcher) loop() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.sample()
		case <-w.stop:
			w.sample() // the partial last interval
			return
		}
	}
}

// sample takes one reading. A failed group read drops the sample; the first
// error is kept for Err.
func (w *Watcher) sample() {
	s := Sample{TimeWait: -1}
	var st cgroup.Stats
	var err error
	if w.g != nil {
		st, err = w.g.Stats()
	}
	s.T = time.Since(w.start)
	var twErr error
	if w.timeWait != nil {
		if n, e := w.timeWait(); e == nil {
			s.TimeWait = n
		} else {
			twErr = e
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if twErr != nil && w.err == nil {
		w.err = fmt.Errorf("watch: TIME_WAIT count: %v", twErr)
	}
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("watch %s: %v", w.g.Name(), err)
		}
		return
	}
	if dt := s.T - w.prevT; dt > 0 && st.CPUNanos >= w.prevCPU {
		// A process-tree group's counter can step back; count that
		// interval as idle rather than negative.
		s.CPUCores = float64(st.CPUNanos-w.prevCPU) / float64(dt.Nanoseconds())
	}
	// The counters only grow in one group; a drop (another group) counts
	// as nothing.
	s.CPUQuota = st.CPUQuota
	s.NrPeriods = since(st.NrPeriods, w.prevBW.NrPeriods)
	s.NrThrottled = since(st.NrThrottled, w.prevBW.NrThrottled)
	s.ThrottledNanos = since(st.ThrottledNanos, w.prevBW.ThrottledNanos)
	w.prevBW = st
	w.prevCPU, w.prevT = st.CPUNanos, s.T
	s.MemCurrent, s.MemAnon, s.MemKernel, s.MemFile, s.MemPeak = st.MemCurrent, st.MemAnon, st.MemKernel, st.MemFile, st.MemPeak
	s.Procs, s.Threads = st.Procs, st.Threads
	w.samples = append(w.samples, s)
}

// Stop ends sampling after one last reading and returns all samples. Later
// calls return the same samples.
func (w *Watcher) Stop() []Sample {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Sample(nil), w.samples...)
}

// Samples returns the samples so far (the watcher goes on).
func (w *Watcher) Samples() []Sample {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Sample(nil), w.samples...)
}

// Latest returns the most recent sample (the zero Sample before the first).
func (w *Watcher) Latest() Sample {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.samples) == 0 {
		return Sample{}
	}
	return w.samples[len(w.samples)-1]
}

// Err returns the first read error, if any (a removed group, a closed lab).
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// since is now-before for a counter, 0 if it went back.
func since(now, before uint64) uint64 {
	if now < before {
		return 0
	}
	return now - before
}
