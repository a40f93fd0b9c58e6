package gen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// run is the state shared by the loops of one run. Loops only read it,
// except for the atomics and channels.
type run struct {
	cfg    *Config
	target Target
	req    []byte
	dst    netip.AddrPort
	family int

	start   time.Time
	warmup  int64 // ns since start
	netns   int   // fd of the namespace to enter, -1 for none
	tls     *tlsClient
	loops   []*loop
	ready   sync.WaitGroup
	go_     chan struct{}
	stopped atomic.Bool

	loopsDone  sync.WaitGroup
	unfinished atomic.Int64
	reports    chan secondReport
	histPool   chan *hdr.Histogram
	histMax    int64 // latency histogram ceiling, µs (see histCeiling)
	pwait2     bool  // the kernel lets us call epoll_pwait2
	notes      []string

	failMu  sync.Mutex
	failErr error

	diagFd int // sock_diag netlink socket in the generator's namespace, -1 if none
}

// secondReport is what a loop hands the aggregator at each second boundary.
type secondReport struct {
	loop   int
	t      int
	counts secondCounts
	hist   *hdr.Histogram
	dur    int64 // ns of the second the loop covered (1 s but for the last)
}

func (r *run) fail(err error) {
	r.failMu.Lock()
	if r.failErr == nil {
		r.failErr = err
	}
	r.failMu.Unlock()
	r.ready.Done()
}

// newHist returns a latency histogram with the run's ceiling.
func (r *run) newHist() *hdr.Histogram { return newHistMax(r.histMax) }

// newRun returns the shared state of a run against dst.
func newRun(cfg *Config, t Target, dst netip.AddrPort) *run {
	return &run{cfg: cfg, target: t, dst: dst, netns: -1, diagFd: -1, go_: make(chan struct{}),
		histMax: histCeiling(cfg), warmup: int64(cfg.Warmup)}
}

// fillHistPool prepares the interval histograms the loops swap each second.
func (r *run) fillHistPool(nloops int) {
	r.reports = make(chan secondReport, nloops*64)
	r.histPool = make(chan *hdr.Histogram, nloops*4)
	for i := 0; i < nloops*3; i++ {
		r.histPool <- r.newHist()
	}
}

// Run executes one load run and returns its result. It returns an error only
// when the run could not start (bad Config: a *UsageError; unreachable
// target, no permission: a plain error). Once started, every failure is a
// counted request error and the result is returned. Cancelling ctx stops
// the run early; the result then has Interrupted set.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.HTTP3 {
		return runH3(ctx, &cfg)
	}
	r, err := prepare(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.execute(ctx)
}

// prepare resolves the target, checks that it accepts connections and
// builds the loops.
func prepare(ctx context.Context, cfg *Config) (*run, error) {
	t, _ := ParseTarget(cfg.URL)
	if cfg.HTTP3 && t.Scheme != "https" {
		return nil, usage("--http3 needs an https:// URL")
	}
	dst, err := t.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	r := newRun(cfg, t, dst)
	r.pwait2 = probePwait2()
	if !r.pwait2 {
		r.notes = append(r.notes, "epoll_pwait2 is not available (older kernel or a seccomp filter): the loops sleep on a timerfd with epoll_wait, one more system call per sleep")
	}
	r.family = unix.AF_INET
	if dst.Addr().Is6() {
		r.family = unix.AF_INET6
	}
	for _, a := range cfg.SrcAddrs {
		if a.Is4() != dst.Addr().Is4() {
			return nil, usage("--src-addrs %s is not of the target's address family (%s)", a, dst.Addr())
		}
	}
	r.req = buildRequest(cfg, t)
	if t.Scheme == "https" {
		if r.tls, err = newTLSClient(cfg, t); err != nil {
			return nil, err
		}
	}
	if err := r.openNetns(); err != nil {
		return nil, err
	}
	if err := r.probe(); err != nil {
		r.close()
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
		return fmt.Errorf("open network namespace %s: %v", r.cfg.NetNS, err)
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

// inNetns runs fn on a fresh OS thread inside the run's network namespace
// (or the current one). The thread is discarded afterwards.
func (r *run) inNetns(fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if r.netns >= 0 {
			if err := unix.Setns(r.netns, unix.CLONE_NEWNET); err != nil {
				ch <- fmt.Errorf("enter network namespace %s: %v", r.cfg.NetNS, err)
				return
			}
		}
		ch <- fn()
	}()
	return <-ch
}

// probe makes one TCP connection to the target so that a run against
// nothing fails at once with a clear message instead of a result full of
// connect errors.
func (r *run) probe() error {
	return r.inNetns(func() error {
		if err := checkLocalTarget(r.cfg, r.dst.Addr()); err != nil {
			return err
		}
		d := net.Dialer{Timeout: min(r.cfg.Timeout, 3*time.Second)}
		c, err := d.Dial("tcp", r.dst.String())
		if err != nil {
			var errno unix.Errno
			switch {
			case errors.As(err, &errno) && errno == unix.ECONNRESET:
				// The server accepted and reset before the dialer read
				// SO_ERROR: something is listening. The run counts the
				// resets rather than refusing to start.
				return r.startDiag()
			case errors.As(err, &errno) && errno == unix.ECONNREFUSED:
				return fmt.Errorf("nothing is listening on %s (connection refused): start the server or check the URL", r.dst)
			case isTimeout(err):
				return fmt.Errorf("%s did not accept a TCP connection within %v: check that the server is up and reachable", r.dst, d.Timeout)
			}
			return fmt.Errorf("cannot connect to %s: %v", r.dst, err)
		}
		c.Close()
		if err := r.checkSrcAddrs(); err != nil {
			return err
		}
		return r.startDiag()
	})
}

// checkSrcAddrs binds a socket to each --src-addrs address once, so that an
// address this host (or namespace) does not have fails before the run
// instead of turning every request into addr_not_avail.
func (r *run) checkSrcAddrs() error {
	for _, a := range r.cfg.SrcAddrs {
		fd, err := unix.Socket(r.family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %v", err)
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
		err = unix.Bind(fd, sockaddr(netip.AddrPortFrom(a, 0)))
		unix.Close(fd)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("--src-addrs %s is not an address of this host (bind: %v): add it to an interface or list local addresses", a, err)}
		}
	}
	return nil
}

// startDiag opens the sock_diag socket that counts TIME_WAIT, if it can.
func (r *run) startDiag() error {
	if fd, err := openDiag(); err == nil {
		r.diagFd = fd
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sockaddr converts an address for the raw socket calls.
func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// execute builds and starts the loops, aggregates, and assembles the result.
func (r *run) execute(ctx context.Context) (*Result, error) {
	cfg := r.cfg
	cpus := cfg.CPUs
	if len(cpus) == 0 {
		all, err := pin.Allowed()
		if err != nil {
			return nil, fmt.Errorf("read CPU affinity: %v", err)
		}
		cpus = all
	}
	conns := cfg.shardConnections()
	nloops := min(len(cpus), conns)
	maxPending := cfg.MaxPending
	if maxPending == 0 {
		maxPending = int(math.Min(1e6, math.Max(1000, cfg.shardRate()*cfg.Timeout.Seconds())))
	}
	r.fillHistPool(nloops)
	for i := 0; i < nloops; i++ {
		r.loops = append(r.loops, r.newLoop(i, nloops, cpus[i], share(conns, i, nloops), maxPending))
	}
	// Each loop holds a P for the whole run (raw system calls, see
	// rawio.go); one more P runs everything else.
	holdPs(nloops)
	defer releasePs(nloops)
	r.ready.Add(nloops)
	r.loopsDone.Add(nloops)
	for _, l := range r.loops {
		go l.main()
	}
	r.ready.Wait()
	if err := r.awaitStart(ctx); err != nil {
		r.abortStart(err)
	}
	if r.failErr != nil {
		close(r.go_)
		r.loopsDone.Wait()
		return nil, r.failErr
	}
	agg := r.drive(ctx, nloops, func() {
		for _, l := range r.loops {
			l.wake()
		}
	})
	return r.result(agg, r.h1Outcome(cpus[:nloops], maxPending)), nil
}

// drive starts the loops (they wait on r.go_), stops them early when ctx
// ends (wakeAll interrupts their sleep), aggregates their per-second
// reports and returns once every loop has ended. Both engines use it.
func (r *run) drive(ctx context.Context, nloops int, wakeAll func()) *aggregator {
	agg := newAggregator(r, nloops)
	if r.start.IsZero() { // else set by awaitStart to Config.StartAt
		r.start = time.Now()
	}
	close(r.go_)
	stopWatch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.stopped.Store(true)
			wakeAll()
		case <-stopWatch:
		}
	}()
	aggDone := make(chan struct{})
	go func() { agg.run(); close(aggDone) }()
	r.loopsDone.Wait()
	close(stopWatch)
	close(r.reports)
	<-aggDone
	return agg
}

func (c *Config) openLoop() bool { return c.Rate > 0 }

// The epoll loops of every run in the process hold a P each (raw system
// calls keep it while they sleep), so GOMAXPROCS must cover all of them
// plus one for everything else, or a run started beside another would
// leave its own loops, or the process's other goroutines (a library
// caller's servers, say), without a P. holdPs and releasePs keep one
// process-wide count and restore the caller's setting when the last run ends.
var procs struct {
	sync.Mutex
	held int // loops of the runs in progress
	base int // GOMAXPROCS before the first of them
}

func holdPs(n int) {
	procs.Lock()
	defer procs.Unlock()
	if procs.held == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.held += n
	if want := procs.held + 1; want > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
}

func releasePs(n int) {
	procs.Lock()
	defer procs.Unlock()
	procs.held -= n
	want := max(procs.base, procs.held+1)
	if procs.held == 0 {
		want = procs.base
	}
	if want != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
}

// newLoop builds loop i of nloops, on cpu, with n connections.
func (r *run) newLoop(i, nloops, cpu, n, maxPending int) *loop {
	cfg := r.cfg
	l := &loop{id: i, cpu: cpu, r: r, rec: newRecorder(r.warmup, r.histMax), epfd: -1, wakefd: -1, timerfd: -1}
	l.dst = sockaddr(r.dst)
	for _, a := range cfg.SrcAddrs {
		l.src = append(l.src, sockaddr(netip.AddrPortFrom(a, 0)))
	}
	if len(l.src) > 0 {
		l.srcNext = i % len(l.src)
	}
	l.conns = make([]conn, n)
	l.idle = make([]int32, 0, n)
	l.schedule = newSchedule(cfg, i, nloops, maxPending)
	for j := range l.conns {
		l.conns[j].init(j, cfg.VerifySHA256 != nil, cfg.Method == "HEAD")
		if l.open {
			l.idle = append(l.idle, int32(j))
		}
	}
	l.nextSecond = int64(time.Second)
	l.scanEvery = max(int64(time.Millisecond), min(int64(cfg.Timeout)/20, int64(10*time.Millisecond)))
	l.nextScan = l.scanEvery
	return l
}

// outcome is what either engine hands result: each loop's recorder and
// the end of its measured window, and the generator's own account of its
// CPUs, which the engines measure differently.
type outcome struct {
	recs        []*recorder
	ends        []int64    // per loop: end of the measured window, ns since start
	shares      []cpuShare // per loop (HTTP/1.1) or per CPU (HTTP/3)
	g           Generator
	protocol    string // "http/1.1" or "h3"
	quicVersion string
}

// h1Outcome collects the epoll loops' recorders, windows and accounts: each
// loop's thread is pinned to its own CPU, so its account is its CPU's.
func (r *run) h1Outcome(cpus pin.CPUSet, maxPending int) outcome {
	o := outcome{protocol: "http/1.1", g: Generator{CPUs: cpus, Loops: len(r.loops), MaxPending: maxPending}}
	for _, l := range r.loops {
		// The measured window of this loop: warmup end to stop.
		end := l.stopAt
		if l.stopWall > 0 && l.stopWall < end {
			end = l.stopWall // interrupted, or --requests reached
		}
		o.recs = append(o.recs, l.rec)
		o.ends = append(o.ends, end)
		o.shares = append(o.shares, l.acct.share())
	}
	return o
}

// result merges the loops' recorders into the Result.
func (r *run) result(agg *aggregator, o outcome) *Result {
	cfg := r.cfg
	total := newRecorder(r.warmup, r.histMax)
	var lagMerged = newHist()
	g := o.g
	interrupted := r.stopped.Load()
	var window float64
	for i, rec := range o.recs {
		total.corrected.Merge(rec.corrected)
		total.corrected2x.Merge(rec.corrected2x)
		total.uncorrected.Merge(rec.uncorrected)
		total.handshake.Merge(rec.handshake)
		lagMerged.Merge(rec.lag)
		for i, v := range rec.status {
			total.status[i] += v
		}
		for i, v := range rec.errors {
			total.errors[i] += v
			if total.firstErr[i] == nil {
				total.firstErr[i] = rec.firstErr[i]
			}
		}
		total.ok += rec.ok
		total.non2xx += rec.non2xx
		total.bytes += rec.bytes
		total.okInWindow += rec.okInWindow
		total.bytesInWindow += rec.bytesInWindow
		total.lateSends += rec.lateSends
		total.dropped += rec.dropped
		total.retries += rec.retries
		total.handshakes += rec.handshakes
		total.resumed += rec.resumed
		total.unsolicited += rec.unsolicited
		total.zeroRTT += rec.zeroRTT
		if w := float64(o.ends[i]-r.warmup) / 1e9; w > window {
			window = w
		}
	}
	if window <= 0 {
		window = math.SmallestNonzeroFloat64
	}
	for _, s := range o.shares {
		g.Busy = append(g.Busy, round3(s.busy))
		g.Starved = append(g.Starved, round3(s.starved()))
		g.CPUSeconds = append(g.CPUSeconds, round3(s.cpuS))
	}
	g.LagP50us = lagMerged.ValueAtQuantile(50)
	g.LagP99us = lagMerged.ValueAtQuantile(99)
	g.LagP999us = lagMerged.ValueAtQuantile(99.9)
	g.LagMaxus = lagMerged.Max()
	g.lagSamples = lagMerged.TotalCount()
	g.LateSends = total.lateSends
	g.Dropped = total.dropped
	g.Unfinished = r.unfinished.Load()
	g.Unsolicited = total.unsolicited
	g.TimeWaitPeak = agg.twPeak
	g.Notes = append(g.Notes, r.notes...)
	if r.tls != nil {
		g.Notes = append(g.Notes, r.tls.notes()...)
	}
	if interrupted && g.Unfinished > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("interrupted: %d requests still unanswered after the shortened drain are counted as timeouts", g.Unfinished))
	}

	res := &Result{
		Target:             cfg.URL,
		Protocol:           o.protocol,
		QUICVersion:        o.quicVersion,
		Mode:               "closed",
		Connections:        cfg.Connections,
		DurationS:          round3(window),
		WarmupS:            cfg.Warmup.Seconds(),
		RequestedRate:      cfg.Rate,
		OK:                 total.ok,
		Retries:            total.retries,
		Status:             map[string]uint64{},
		Errors:             map[string]uint64{},
		BytesRead:          total.bytes,
		Latency:            latencyOf(total.corrected),
		Latency2xx:         latencyOf(total.corrected2x),
		LatencyUncorrected: latencyOf(total.uncorrected),
		Handshakes:         total.handshakes,
		PerSecond:          agg.seconds,
		Interrupted:        interrupted,
		CorrectedHist:      total.corrected,
		Corrected2xxHist:   total.corrected2x,
		UncorrectedHist:    total.uncorrected,
	}
	if cfg.openLoop() {
		res.Mode = "open"
	}
	g.verdict(o.shares, res)
	res.Generator = g
	res.AchievedRate = round3(float64(total.okInWindow) / window)
	res.ThroughputGbps = round3(float64(total.bytesInWindow) * 8 / window / 1e9)
	for code, v := range total.status {
		if v > 0 {
			res.Status[strconv.Itoa(code)] = v
		}
	}
	var nerr uint64
	for i, v := range total.errors {
		name := ErrorClass(i).String()
		res.Errors[name] = v
		nerr += v
		if total.firstErr[i] != nil {
			if res.ErrorSamples == nil {
				res.ErrorSamples = map[string]string{}
			}
			res.ErrorSamples[name] = total.firstErr[i].Error()
		}
	}
	res.Requests = total.ok + total.non2xx + nerr
	if total.handshakes > 0 || cfg.NewConn || r.tls != nil {
		res.HandshakeRate = round3(float64(total.handshakes) / window)
		hs := latencyOf(total.handshake)
		res.HandshakeUs = &hs
	}
	if r.tls != nil {
		res.TLS = r.tls.info(total.resumed, total.zeroRTT)
	}
	r.mergeable(res, total)
	return res
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
