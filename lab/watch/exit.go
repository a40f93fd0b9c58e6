package watch

import (
	"sync"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/proc"
)

// oomEvery is how often ExitWatcher reads the group's OOM-kill counter.
const oomEvery = 100 * time.Millisecond

// Death is what an ExitWatcher saw: the watched program exited, or the
// kernel's OOM killer killed a process of its group, or both.
type Death struct {
	At       time.Time // the first of the two
	Exited   bool      // the program itself (the proxy's master) exited
	Exit     proc.Exit // how, when Exited
	OOMKills uint64    // processes of the group the OOM killer killed while watched
}

// OOM reports whether the OOM killer took part.
func (d *Death) OOM() bool { return d.OOMKills > 0 }

// ExitWatcher watches one running program and its group (for OOM kills)
// from WatchExit until Stop.
type ExitWatcher struct {
	pr   *proc.Process
	g    cgroup.Group
	oom0 uint64
	ook  bool

	mu    sync.Mutex
	oomAt time.Time
	oomN  uint64

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// WatchExit watches pr (the wait status its supervisor collects) and, when
// g has a memory controller, g's OOM-kill counter (v2 memory.events, v1
// memory.oom_control), read every 100 ms. pr may already have exited:
// Stop then reports it at once.
func WatchExit(pr *proc.Process, g cgroup.Group) *ExitWatcher {
	w := &ExitWatcher{pr: pr, g: g, stop: make(chan struct{}), done: make(chan struct{})}
	if g != nil {
		w.oom0, w.ook, _ = cgroup.OOMKills(g)
	}
	go w.loop()
	return w
}

func (w *ExitWatcher) loop() {
	defer close(w.done)
	if !w.ook {
		return
	}
	t := time.NewTicker(oomEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			w.readOOM() // a kill just before Stop
			return
		case <-t.C:
			w.readOOM()
		}
	}
}

// readOOM records the counter and when it first rose.
func (w *ExitWatcher) readOOM() {
	n, ok, err := cgroup.OOMKills(w.g)
	if err != nil || !ok || n <= w.oom0 {
		return
	}
	w.mu.Lock()
	if w.oomAt.IsZero() {
		w.oomAt = time.Now()
	}
	w.oomN = n - w.oom0
	w.mu.Unlock()
}

// Stop ends the watch and returns what happened, nil when the program ran
// throughout and nothing of its group was OOM-killed. Safe to call more
// than once.
func (w *ExitWatcher) Stop() *Death {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
	var d Death
	if w.pr != nil {
		if x, ok := w.pr.ExitInfo(); ok {
			d.Exited, d.Exit, d.At = true, x, x.At
		}
	}
	w.mu.Lock()
	d.OOMKills = w.oomN
	if !w.oomAt.IsZero() && (d.At.IsZero() || w.oomAt.Before(d.At)) {
		d.At = w.oomAt
	}
	w.mu.Unlock()
	if !d.Exited && d.OOMKills == 0 {
		return nil
	}
	return &d
}
