package gen

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// run is the state shared by the loops of one run, whatever the engine.
// Loops only read it, except for the atomics and channels.
type run struct {
	cfg *Prepared
	dst netip.AddrPort
	eng engine

	start   time.Time
	warmup  int64 // ns since start
	netns   int   // fd of the namespace to enter, -1 for none
	tls     *tlsClient
	loops   []*lifecycle
	ready   sync.WaitGroup
	go_     chan struct{}
	stopped atomic.Bool // interrupted (the context ended)
	aborted atomic.Bool // a loop's setup failed: the others leave at once
	broken  atomic.Bool // a loop's I/O failed mid-run: every loop stops (failErr says why)
	lag     lagJudge    // the lag rule's samples and what it judged (set when the result is assembled)

	loopsDone  sync.WaitGroup
	unfinished atomic.Int64
	reports    chan secondReport
	histPool   chan *hdr.Histogram
	obs        []Observer     // told each second and at the end (Run's observers)
	liveFree   chan liveHists // observers: the loops' spare live histograms
	final      *result.Live   // observers: the result's own Live, told once the result is assembled
	histMax    int64          // latency histogram ceiling, µs (see histCeiling)
	notes      []string

	failMu  sync.Mutex
	failErr error

	diagFd int // sock_diag netlink socket in the generator's namespace, -1 if none

	wake *wakeProbe // Config.WakeProbe's, over the measured window (nil: none)
}

// secondReport is what a loop hands the aggregator at each second boundary.
type secondReport struct {
	loop   int
	t      int
	counts secondCounts
	hist   *hdr.Histogram
	dur    int64       // ns of the second the loop covered (1 s but for the last)
	live   *liveReport // the loop's share of the observers' Live (nil: no observers)
}

// breakDownAtSetup records a loop's setup failure (the first one wins) and counts the
// loop as ready: it leaves without sending.
func (r *run) breakDownAtSetup(err error) {
	r.breakDownAtStart(err)
	r.ready.Done()
}

// breakDown records the failure of a loop's I/O in the middle of the run
// (the first one wins, as in fail) and stops every loop: Run returns the
// result with that error.
func (r *run) breakDown(err error) {
	r.breakDownAtStart(err)
	if !r.broken.Swap(true) {
		for _, lc := range r.loops {
			lc.d.wake()
		}
	}
}

// newHist returns a latency histogram with the run's ceiling.
func (r *run) newHist() *hdr.Histogram { return newHistMax(r.histMax) }

// fillHistPool prepares the interval histograms the loops swap each second.
func (r *run) fillHistPool(nloops int) {
	r.reports = make(chan secondReport, nloops*64)
	r.histPool = make(chan *hdr.Histogram, nloops*4)
	for i := 0; i < nloops*3; i++ {
		r.histPool <- r.newHist()
	}
	if len(r.obs) > 0 {
		r.liveFree = make(chan liveHists, nloops*2)
	}
}

// Observer watches a run as it goes: the CLI's progress line and its
// HdrHistogram log (result.HdrLog), the metrics endpoint (gen/metrics) and
// the lab's step observers are observers. Run calls Second once a second,
// and End once after the run, with the result's own numbers (Final), both
// from one goroutine of the run, one observer after the other. They must
// return quickly and not keep the Live, or what it points to, past the
// call. A run with observers records each response's latency once more
// (the measured window's histograms they are given); one without records
// nothing for them.
type Observer interface {
	Second(lv *result.Live)
	End(lv *result.Live)
}

// Run executes one load run and returns its result. It returns an error
// when the run could not start (bad Config: a *UsageError; unreachable
// target, no permission: a plain error); then the result is nil. Once
// started, every failure of a request is a counted request error and the
// result is returned; but when the generator's own I/O fails (a loop's
// io_uring), the run stops at once and Run returns both its result, in
// which every owed request has its one outcome, and that error. Cancelling
// ctx stops the run early; the result then has Interrupted set. The
// observers (see Observer) watch it as it goes.
func Run(ctx context.Context, cfg Config, obs ...Observer) (*result.Result, error) {
	cfg.Defaults()
	p, err := cfg.Prepare()
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, obs...)
}

// Run runs the prepared run p (see Run: the same results and errors, but
// for the checks Prepare made already).
func (p *Prepared) Run(ctx context.Context, obs ...Observer) (*result.Result, error) {
	r, err := newRun(ctx, p)
	if err != nil {
		return nil, err
	}
	r.obs = obs
	defer r.close()
	if r.eng, err = newEngine(r); err != nil {
		return nil, err
	}
	res, err := r.execute(ctx)
	if err == nil && len(p.Thresholds) > 0 {
		res.Thresholds, _ = result.CheckThresholds(p.Thresholds, res)
	}
	return res, err
}

// newRun resolves the target and prepares what every engine shares: the
// network namespace and the TLS client.
func newRun(ctx context.Context, cfg *Prepared) (*run, error) {
	dst, err := cfg.target.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, dst: dst, netns: -1, diagFd: -1, go_: make(chan struct{}),
		histMax: histCeiling(cfg), warmup: int64(cfg.Warmup)}
	if cfg.target.Scheme == "https" {
		if r.tls, err = newTLSClient(cfg, cfg.target); err != nil {
			return nil, err
		}
	}
	if err := r.openNetns(); err != nil {
		return nil, err
	}
	return r, nil
}

// openNetns opens the namespace the loops will enter (Config.NetNS).
func (r *run) openNetns() error {
	if r.cfg.NetNS == "" {
		return nil
	}
	fd, err := unix.Open(r.cfg.NetNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open network namespace %s: %w", r.cfg.NetNS, err)
	}
	r.netns = fd
	return nil
}

func (r *run) close() {
	if r.netns >= 0 {
		unix.Close(r.netns)
		r.netns = -1
	}
	if r.diagFd >= 0 {
		unix.Close(r.diagFd)
		r.diagFd = -1
	}
}

// enterNetns moves the calling thread into the run's network namespace, if
// there is one. The thread must be locked and never returned to the
// scheduler's pool afterwards (the loops keep theirs for the run).
func (r *run) enterNetns() error {
	if r.netns < 0 {
		return nil
	}
	if err := unix.Setns(r.netns, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter network namespace %s: %w", r.cfg.NetNS, err)
	}
	return nil
}

// inNetns runs fn on a fresh OS thread inside the run's network namespace
// (or the current one). The thread is discarded afterwards.
func (r *run) inNetns(fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := r.enterNetns(); err != nil {
			ch <- err
			return
		}
		ch <- fn()
	}()
	return <-ch
}

// startDiag opens the sock_diag socket that counts TIME_WAIT, if it can
// (call it in the run's namespace).
func (r *run) startDiag() {
	if fd, err := openDiag(); err == nil {
		r.diagFd = fd
	}
}

// execute builds and starts the loops, aggregates, and assembles the result.
func (r *run) execute(ctx context.Context) (*result.Result, error) {
	cfg, eng := r.cfg, r.eng
	cpus := cfg.CPUs
	if len(cpus) == 0 {
		all, err := pin.Allowed()
		if err != nil {
			return nil, fmt.Errorf("read CPU affinity: %w", err)
		}
		cpus = all
	}
	conns := cfg.shardConnections() // this shard's part of the run (all of it unsharded)
	nloops := min(len(cpus), conns)
	maxPending := cfg.MaxPending
	if maxPending == 0 {
		maxPending = int(math.Min(1e6, math.Max(1000, cfg.shardRate()*cfg.Timeout.Seconds())))
	}
	release, err := eng.claim(cpus, nloops)
	if err != nil {
		return nil, err
	}
	defer release()
	r.fillHistPool(nloops)
	for i := 0; i < nloops; i++ {
		lc := &lifecycle{id: i, cpu: cpus[i], r: r, rec: newRecorder(r.warmup, r.histMax),
			schedule: newSchedule(cfg, i, nloops, maxPending), nextSecond: int64(time.Second)}
		lc.rec.withTargets(len(cfg.reqs), r.histMax)
		if len(r.obs) > 0 {
			lc.rec.live = r.spareLive()
		}
		d, err := eng.newDriver(lc, share(conns, i, nloops))
		if err != nil {
			for _, built := range r.loops {
				built.d.teardown()
			}
			return nil, err
		}
		lc.d = d
		r.loops = append(r.loops, lc)
	}
	r.ready.Add(nloops)
	r.loopsDone.Add(nloops)
	for _, lc := range r.loops {
		go lc.main()
	}
	r.ready.Wait()
	if err := r.awaitStart(ctx); err != nil {
		r.breakDownAtStart(err)
	}
	if r.failErr != nil {
		r.aborted.Store(true)
		close(r.go_)
		r.loopsDone.Wait()
		return nil, r.failErr
	}
	agg := r.drive(ctx)
	o := outcome{protocol: eng.protocol(), g: result.Generator{CPUs: cpus[:nloops], Loops: nloops, MaxPending: maxPending,
		PacingToleranceUs: cfg.PacingTolerance.Microseconds()}}
	for _, lc := range r.loops {
		o.recs = append(o.recs, lc.rec)
		o.ends = append(o.ends, lc.windowEnd())
	}
	eng.outcome(&o)
	res := r.result(agg, o)
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

// drive starts the loops (they wait on r.go_), stops them early when ctx
// ends (waking their sleep), aggregates their per-second reports and returns
// once every loop has ended.
func (r *run) drive(ctx context.Context) *aggregator {
	agg := newAggregator(r, len(r.loops))
	if r.start.IsZero() { // else set by awaitStart to Config.StartAt
		r.start = time.Now()
	}
	if r.cfg.WakeProbe {
		var cpus []int
		for _, lc := range r.loops {
			cpus = append(cpus, lc.cpu)
		}
		r.wake = startWakeProbe(cpus, WakeProbeSleep, 0, r.start.Add(r.cfg.Warmup), r.start.Add(r.cfg.Duration))
	}
	close(r.go_)
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.stopped.Store(true)
			for _, lc := range r.loops {
				lc.d.wake()
			}
		case <-stopWatch:
		}
	}()
	aggDone := make(chan struct{})
	go func() { agg.collect(); close(aggDone) }()
	r.loopsDone.Wait()
	close(stopWatch)
	close(r.reports)
	<-aggDone
	if r.wake != nil {
		r.wake.stop() // an interrupted run ends before the window does
	}
	return agg
}

// startSpin is how long before the start time awaitStart stops sleeping
// and polls the clock: a timer alone wakes late by the scheduler's latency.
const startSpin = 2 * time.Millisecond

// awaitStart waits for Config.StartAt, once the run is ready (target
// probed, loops built and pinned), and makes it the run's time origin:
// request j is due at StartAt + j/Rate in every shard, however late this
// process got there within the tolerance. A run ready later than the
// tolerance fails instead of running unsynchronised with its shards.
// Without StartAt it does nothing (the origin is set when the loops go).
func (r *run) awaitStart(ctx context.Context) error {
	cfg := r.cfg
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
	if tol := cfg.startTolerance(); late > tol {
		who := "the run"
		if s := cfg.Shard.String(); s != "" {
			who = "shard " + s
		}
		return fmt.Errorf("%s was ready %v after its start time %s (tolerance %v), so it would not run in step with its other shards: give a start time further ahead",
			who, late.Round(10*time.Microsecond), at.UTC().Format(time.RFC3339Nano), tol)
	}
	// The origin: now's monotonic clock, at's wall clock.
	r.start = now.Add(-late)
	return nil
}

// breakDownAtStart ends a run whose loops are ready but must not start: they
// see the failure when released and return without sending.
// The first failure wins, as in fail.
func (r *run) breakDownAtStart(err error) {
	r.failMu.Lock()
	if r.failErr == nil {
		r.failErr = err
	}
	r.failMu.Unlock()
}
