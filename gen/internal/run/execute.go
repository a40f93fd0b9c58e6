package run

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// Execute runs spec with the engine newEngine builds for it, observed by
// obs, and returns its result, as gen.Run says.
func Execute(ctx context.Context, spec *Spec, newEngine NewEngine, obs []Observer) (*result.Result, error) {
	r, err := newRun(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.obs = obs
	if r.eng, err = newEngine(r); err != nil {
		return nil, err
	}
	return r.execute(ctx)
}

// Note adds a remark to the result's generator notes (before the result
// is assembled).
func (r *Run) Note(s string) { r.notes = append(r.notes, s) }

// Begun waits for the run to start (the loops are released) and seconds
// whether it goes on: false when another loop's setup failed.
func (r *Run) Begun() bool {
	<-r.goCh
	return !r.aborted.Load()
}

// breakDownAtSetup records a loop's setup failure (the first one wins) and counts the
// loop as ready: it leaves without sending.
func (r *Run) breakDownAtSetup(err error) {
	r.breakDownAtStart(err)
	r.ready.Done()
}

// breakDown records the failure of a loop's I/O in the middle of the run
// (the first one wins, as in fail) and stops every loop: Run returns the
// result with that error.
func (r *Run) breakDown(err error) {
	r.breakDownAtStart(err)
	if !r.broken.Swap(true) {
		for _, lc := range r.Loops {
			lc.D.Wake()
		}
	}
}

// newHist returns a latency histogram with the run's ceiling.
func (r *Run) newHist() *hdr.Histogram { return newHistMax(r.histMax) }

// fillHistPool prepares the interval histograms the loops swap each second.
func (r *Run) fillHistPool(nloops int) {
	r.seconds = make(chan loopSecond, nloops*64)
	r.histPool = make(chan *hdr.Histogram, nloops*4)
	for i := 0; i < nloops*3; i++ {
		r.histPool <- r.newHist()
	}
	if len(r.obs) > 0 {
		r.liveFree = make(chan liveHists, nloops*2)
	}
}

// newRun resolves the target and prepares what every engine shares: the
// network namespace and the TLS client.
func newRun(ctx context.Context, s *Spec) (*Run, error) {
	dst, err := s.Target.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	r := &Run{Spec: s, Dst: dst, netns: -1, diagFd: -1, goCh: make(chan struct{}),
		histMax: histCeiling(s), warmup: int64(s.Warmup)}
	if s.Target.Scheme == "https" {
		if r.TLS, err = NewTLSClient(s); err != nil {
			return nil, err
		}
	}
	if err := r.openNetns(); err != nil {
		return nil, err
	}
	return r, nil
}

// openNetns opens the namespace the loops will enter (Config.NetNS).
func (r *Run) openNetns() error {
	if r.Spec.NetNS == "" {
		return nil
	}
	fd, err := unix.Open(r.Spec.NetNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", r.Spec.NetNS, err)
	}
	r.netns = fd
	return nil
}

func (r *Run) close() {
	if r.netns >= 0 {
		unix.Close(r.netns)
		r.netns = -1
	}
	if r.diagFd >= 0 {
		unix.Close(r.diagFd)
		r.diagFd = -1
	}
}

// EnterNetns moves the calling thread into the run's network namespace, if
// there is one. The thread must be locked and never returned to the
// scheduler's pool afterwards (the loops keep theirs for the run).
func (r *Run) EnterNetns() error {
	if r.netns < 0 {
		return nil
	}
	if err := unix.Setns(r.netns, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", r.Spec.NetNS, err)
	}
	return nil
}

// InNetns runs fn on a fresh OS thread inside the run's network namespace
// (or the current one). The thread is discarded afterwards.
func (r *Run) InNetns(fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := r.EnterNetns(); err != nil {
			ch <- err
			return
		}
		ch <- fn()
	}()
	return <-ch
}

// StartDiag opens the sock_diag socket that counts TIME_WAIT, if it can
// (call it in the run's namespace).
func (r *Run) StartDiag() {
	if fd, err := openDiag(); err == nil {
		r.diagFd = fd
	}
}

// execute builds and starts the loops, aggregates, and assembles the result.
func (r *Run) execute(ctx context.Context) (*result.Result, error) {
	cfg, eng := r.Spec, r.eng
	cpus := cfg.CPUs
	if len(cpus) == 0 {
		all, err := pin.Allowed()
		if err != nil {
			return nil, fmt.Errorf("read CPU affinity: %w", err)
		}
		cpus = all
	}
	conns := cfg.ShardConns() // this shard's part of the run (all of it unsharded)
	nloops := min(len(cpus), conns)
	maxPending := cfg.MaxPending
	if maxPending == 0 {
		maxPending = int(math.Min(1e6, math.Max(1000, cfg.ShardRate()*cfg.Timeout.Seconds())))
	}
	release, err := eng.Claim(cpus, nloops)
	if err != nil {
		return nil, err
	}
	defer release()
	r.fillHistPool(nloops)
	for i := 0; i < nloops; i++ {
		if _, err := r.newLoop(i, cpus[i], nloops, maxPending, Share(conns, i, nloops)); err != nil {
			for _, built := range r.Loops {
				built.D.Teardown()
			}
			return nil, err
		}
	}
	r.ready.Add(nloops)
	r.loopsDone.Add(nloops)
	for _, lc := range r.Loops {
		go lc.main()
	}
	r.ready.Wait()
	if err := r.awaitStart(ctx); err != nil {
		r.breakDownAtStart(err)
	}
	if r.failErr != nil {
		r.aborted.Store(true)
		close(r.goCh)
		r.loopsDone.Wait()
		return nil, r.failErr
	}
	agg := r.drive(ctx)
	st := Stats{Gen: result.Generator{CPUs: cpus[:nloops], Loops: nloops, MaxPending: maxPending,
		PacingToleranceUs: cfg.PacingTolerance.Microseconds()}}
	eng.Stats(&st)
	res := r.result(agg, &st)
	r.wakeFloor(res)
	if r.final != nil {
		for _, o := range r.obs {
			o.End(r.final)
		}
	}
	if r.broken.Load() {
		res.Generator.Notes = append(res.Generator.Notes, r.failErr.Error())
		return res, r.failErr
	}
	return res, nil
}

// newLoop builds loop i of nloops, on cpu, with conns connections: its
// lifecycle and its engine's driver.
func (r *Run) newLoop(i, cpu, nloops, maxPending, conns int) (*Lifecycle, error) {
	lc := &Lifecycle{ID: i, CPU: cpu, R: r, Rec: newRecorder(r.warmup, r.histMax),
		Schedule: newSchedule(r.Spec, i, nloops, maxPending), nextSecond: int64(time.Second)}
	lc.Rec.withTargets(len(r.Spec.Reqs), r.histMax)
	if len(r.obs) > 0 {
		lc.Rec.live = r.spareLive()
	}
	d, err := r.eng.NewDriver(lc, conns)
	if err != nil {
		return nil, err
	}
	lc.D = d
	r.Loops = append(r.Loops, lc)
	return lc, nil
}

// drive starts the loops (they wait on r.goCh), stops them early when ctx
// ends (waking their sleep), aggregates their per-second reports and returns
// once every loop has ended.
func (r *Run) drive(ctx context.Context) *aggregator {
	agg := newAggregator(r, len(r.Loops))
	if r.Start.IsZero() { // else set by awaitStart to Spec.StartAt
		r.Start = time.Now()
	}
	if r.Spec.WakeProbe {
		var cpus []int
		for _, lc := range r.Loops {
			cpus = append(cpus, lc.CPU)
		}
		r.wake = startWakeProbe(cpus, WakeProbeSleep, 0, r.Start.Add(r.Spec.Warmup), r.Start.Add(r.Spec.Duration))
	}
	close(r.goCh)
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.stopped.Store(true)
			for _, lc := range r.Loops {
				lc.D.Wake()
			}
		case <-stopWatch:
		}
	}()
	aggDone := make(chan struct{})
	go func() { agg.collect(); close(aggDone) }()
	r.loopsDone.Wait()
	close(stopWatch)
	close(r.seconds)
	<-aggDone
	if r.wake != nil {
		r.wake.stop() // an interrupted run ends before the window does
	}
	return agg
}

// startSpin is how long before the start time awaitStart stops sleeping
// and polls the clock: a timer alone wakes late by the scheduler's latency.
const startSpin = 2 * time.Millisecond

// awaitStart waits for Spec.StartAt, once the run is ready (target
// probed, loops built and pinned), and makes it the run's time origin:
// request j is due at StartAt + j/Rate in every shard, however late this
// process got there within the tolerance. A run ready later than the
// tolerance fails instead of running unsynchronised with its shards.
// Without StartAt it does nothing (the origin is set when the loops go).
func (r *Run) awaitStart(ctx context.Context) error {
	cfg := r.Spec
	// The wall clock alone: every shard's clock is its machine's wall
	// clock, and the origin's wall time must be the start time exactly.
	at := cfg.StartAt.Round(0)
	if at.IsZero() {
		return nil
	}
	if d := time.Until(at) - startSpin; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted before the start time %s: %w", at.UTC().Format(time.RFC3339Nano), ctx.Err())
		case <-t.C:
		}
	}
	for time.Until(at) > 0 {
		runtime.Gosched()
	}
	now := time.Now()
	late := now.Sub(at) // wall clock: at has no monotonic reading
	if tol := cfg.StartTolerance; late > tol {
		who := "the run"
		if cfg.Shards > 1 {
			who = fmt.Sprintf("shard %d/%d", cfg.Shard, cfg.Shards)
		}
		return fmt.Errorf("%s was ready %v after its start time %s (tolerance %v), so it would not run in step with its other shards: give a start time further ahead",
			who, late.Round(10*time.Microsecond), at.UTC().Format(time.RFC3339Nano), tol)
	}
	// The origin: now's monotonic clock, at's wall clock.
	r.Start = now.Add(-late)
	return nil
}

// breakDownAtStart ends a run whose loops are ready but must not start: they
// see the failure when released and return without sending.
// The first failure wins, as in fail.
func (r *Run) breakDownAtStart(err error) {
	r.failMu.Lock()
	if r.failErr == nil {
		r.failErr = err
	}
	r.failMu.Unlock()
}
