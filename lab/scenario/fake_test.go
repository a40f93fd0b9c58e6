package scenario

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/lab/watch"
	"github.com/loadlab/loadlab/pin"
)

// fakeLab stands in for lab/session: proxies with a fixed capacity per
// profile, a TIME_WAIT count that a failed step raises and that drains by
// a fixed amount per reading, and a generator that answers from the model
// without sending anything.
type fakeLab struct {
	mu        sync.Mutex
	capacity  map[string]float64 // profile -> req/s it sustains
	startErr  map[string]error
	opens     []session.Options
	closed    int
	renewals  int
	serves    int     // reference targets started (generator ceilings)
	genCap    float64 // req/s above which the generator reports itself as the bottleneck (0 = none)
	started   []string
	stopped   int
	tw        int
	drain     int // TIME_WAIT sockets that expire per reading
	genCalls  int
	genConfig []gen.Config
	// serveFeatures are the protocols each StartServe asked for
	serveFeatures []proxy.Features
	backend       backend.Stats
	connsPer      float64 // backend connections per request
	// cancelAt cancels the run's context when the generator is called for
	// the n-th time (the result comes back interrupted, as gen does).
	cancelAt int
	cancel   context.CancelFunc
	usageErr bool
	// onGen, if set, runs (under the lock) before each generator call's
	// answer: a test changes capacities in it.
	onGen func(cfg gen.Config)
	// extReads counts TCPExt readings (the fake counters grow by one step
	// per reading).
	extReads int
}

func newFakeLab() *fakeLab {
	return &fakeLab{capacity: map[string]float64{serveProfile.Name: 1e9}, startErr: map[string]error{}, drain: 400}
}

func (f *fakeLab) open(_ context.Context, o session.Options) (Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opens = append(f.opens, o)
	f.backend.Apps = nil
	if o.Backends > 0 {
		f.backend.Apps = make([]uint64, o.Backends) // a fresh backend: named apps
	}
	return &fakeSession{lab: f, opts: o}, nil
}

type fakeSession struct {
	lab  *fakeLab
	opts session.Options
}

func (e *fakeSession) Plan() pin.Plan {
	return pin.Plan{Server: e.opts.ServerCPUs, Backend: e.opts.BackendCPUs, Loadgen: e.opts.LoadgenCPUs, Notes: []string{"fake layout"}}
}
func (e *fakeSession) Net() string { return e.opts.Net }
func (e *fakeSession) BackendStats() (backend.Stats, error) {
	e.lab.mu.Lock()
	defer e.lab.mu.Unlock()
	st := e.lab.backend
	st.Apps = slices.Clone(st.Apps)
	return st, nil
}
func (e *fakeSession) StartProxy(_ context.Context, profile string, key certs.KeyType) (Proxy, error) {
	e.lab.mu.Lock()
	defer e.lab.mu.Unlock()
	if err := e.lab.startErr[profile]; err != nil {
		return nil, err
	}
	p, err := proxy.Get(profile)
	if err != nil {
		return nil, err
	}
	e.lab.started = append(e.lab.started, profile+"/"+string(key))
	return &fakeProxy{lab: e.lab, prof: p, key: key}, nil
}
func (e *fakeSession) StartServe(_ context.Context, key certs.KeyType, f proxy.Features) (Proxy, error) {
	e.lab.mu.Lock()
	defer e.lab.mu.Unlock()
	e.lab.serves++
	e.lab.serveFeatures = append(e.lab.serveFeatures, f)
	return &fakeProxy{lab: e.lab, prof: serveProfile, key: key}, nil
}
func (e *fakeSession) TimeWait(role string) (int, error) {
	if role != "proxy" {
		return 0, nil
	}
	e.lab.mu.Lock()
	defer e.lab.mu.Unlock()
	n := e.lab.tw
	e.lab.tw = max(0, e.lab.tw-e.lab.drain)
	return n, nil
}
func (e *fakeSession) Renew(context.Context) (time.Duration, error) {
	e.lab.mu.Lock()
	defer e.lab.mu.Unlock()
	e.lab.renewals++
	e.lab.tw = 0 // fresh namespaces: nothing in TIME_WAIT
	return 200 * time.Millisecond, nil
}
func (e *fakeSession) Close() error {
	e.lab.mu.Lock()
	e.lab.closed++
	e.lab.mu.Unlock()
	return nil
}

type fakeProxy struct {
	lab  *fakeLab
	prof proxy.Profile
	key  certs.KeyType
}

func (p *fakeProxy) Profile() proxy.Profile { return p.prof }
func (p *fakeProxy) Key() certs.KeyType     { return p.key }
func (p *fakeProxy) Version() string        { return p.prof.Proxy + " 0.0-fake" }
func (p *fakeProxy) Aim() session.Aim {
	return session.Aim{HTTPS: netip.MustParseAddrPort("127.0.0.1:1"), HTTP: netip.MustParseAddrPort("127.0.0.1:2"), ServerName: p.prof.Name}
}
func (p *fakeProxy) Watch(every time.Duration) *watch.Watcher {
	return watch.Start(nil, func() (int, error) { return 7, nil }, every)
}
func (p *fakeProxy) IdleMemory(context.Context, time.Duration, int, time.Duration) (watch.Idle, error) {
	return watch.Idle{Need: 4 << 20, File: 1 << 20, Total: 5 << 20, NeedSamples: []uint64{4 << 20, 4 << 20, 4 << 20}, TotalSamples: []uint64{5 << 20, 5 << 20, 5 << 20}}, nil
}
func (p *fakeProxy) ErrorLog() (int, map[string]int, error) {
	return 1, map[string]int{"addr_not_avail": 1}, nil
}
func (p *fakeProxy) Stop() error {
	p.lab.mu.Lock()
	p.lab.stopped++
	p.lab.mu.Unlock()
	return nil
}

// gen answers from the capacity of the profile named in the Host header.
func (f *fakeLab) gen(ctx context.Context, cfg gen.Config) (*result.Result, error) {
	f.mu.Lock()
	f.genCalls++
	f.genConfig = append(f.genConfig, cfg)
	n := f.genCalls
	if f.usageErr {
		f.mu.Unlock()
		return nil, &gen.UsageError{Msg: "bad config"}
	}
	var profile string
	for _, h := range cfg.Headers {
		fmt.Sscanf(h, "Host: %s", &profile)
	}
	if f.onGen != nil {
		f.onGen(cfg)
	}
	capacity := f.capacity[profile]
	// Named backends (hosts scenarios): the requests go to the app of
	// each target's Host in turn, or all to the Host's.
	apps := []int{appIndex(profile)}
	for i, t := range cfg.Targets {
		if i == 0 {
			apps = nil
		}
		for _, h := range t.Headers {
			var host string
			fmt.Sscanf(h, "Host: %s", &host)
			apps = append(apps, appIndex(host))
		}
	}
	f.mu.Unlock()
	if f.cancelAt > 0 && n == f.cancelAt {
		f.cancel()
	}
	secs := (cfg.Duration - cfg.Warmup).Seconds()
	offered := cfg.Rate
	if offered == 0 {
		offered = capacity // closed loop runs at capacity
	}
	achieved := min(offered, capacity)
	p99 := int64(2000)
	if offered > capacity {
		p99 = 2_000_000
	}
	genLimited := f.genCap > 0 && offered > f.genCap
	if genLimited {
		achieved, p99 = min(achieved, f.genCap), 2_000_000
	}
	ok := uint64(achieved * secs)
	h := hdr.New(1, 60_000_000, 3)
	h.RecordValues(p99/2, int64(ok))
	h.RecordValues(p99, int64(ok)/50+1)
	res := &result.Result{
		RequestedRate: cfg.Rate, AchievedRate: achieved, Requests: ok, OK: ok, Mode: "open",
		DurationS: secs, Latency: result.Latency{P50: p99 / 2, P95: p99 / 2, P99: p99},
		Status: map[string]uint64{"200": ok}, Errors: map[string]uint64{},
		PerSecond: []result.PerSecond{{T: 0, OK: ok}}, CorrectedHist: h,
		Interrupted: ctx.Err() != nil,
	}
	if genLimited {
		res.Generator.Bottleneck, res.Generator.Reason = true, "fake generator cap"
	}
	f.mu.Lock()
	if offered > capacity {
		f.tw = 1000
	}
	f.backend.Requests += ok
	f.backend.Accepted += uint64(float64(ok) * f.connsPer)
	for j := range ok {
		if a := apps[j%uint64(len(apps))]; a > 0 && a <= len(f.backend.Apps) {
			f.backend.Apps[a-1]++
		}
	}
	f.mu.Unlock()
	return res, nil
}

// appIndex is NN of appNN.lab.test (0 for any other host).
func appIndex(host string) int {
	var n int
	if _, err := fmt.Sscanf(host, "app%d.lab.test", &n); err != nil {
		return 0
	}
	return n
}

var errNoBinary = fmt.Errorf("nginx: %w", proxy.ErrNotFound)

func notFound(names ...string) Finder {
	return func(p proxy.Profile) error {
		for _, n := range names {
			if p.Name == n {
				return errNoBinary
			}
		}
		return nil
	}
}

var _ = errors.New

// Sysctls reads back the session's kernel settings (NetCounters).
func (e *fakeSession) Sysctls() (map[string]string, error) {
	if len(e.opts.Sysctls) == 0 {
		return nil, nil
	}
	return e.opts.Sysctls, nil
}

// TCPExt counts 1,000 TIME_WAIT entries and, with a tw_buckets setting,
// 500 overflows per reading (NetCounters).
func (e *fakeSession) TCPExt() (map[string]uint64, error) {
	e.lab.mu.Lock()
	defer e.lab.mu.Unlock()
	e.lab.extReads++
	n := uint64(e.lab.extReads)
	m := map[string]uint64{"TW": 1000 * n, "TWRecycled": 0, "TCPTimeWaitOverflow": 0, "ListenOverflows": 0, "ListenDrops": 0, "TWKilled": 0, "Other": 7 * n}
	if e.opts.Sysctls["net.ipv4.tcp_max_tw_buckets"] != "" {
		m["TCPTimeWaitOverflow"] = 500 * n
	}
	return m, nil
}
