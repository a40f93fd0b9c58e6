package lab

import (
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/metrics"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
	"github.com/loadlab/loadlab/lab/watch"
)

// Metrics is `lab run --metrics-addr`: the step now running, the proxy's
// and the backend's cgroups as the step's watchers sample them, the
// finished step's TcpExt deltas, where the run stands, and the
// generator's own metrics (gen/metrics) under the step's labels. Register
// it (it is a prometheus.Collector) and give it to RunOptions.Metrics.
// Scrapes read what the runner last told it; they never touch the run.
type Metrics struct {
	base map[string]string
	gen  *metrics.Gen

	mu      sync.Mutex
	step    *scenario.StepInfo // the step running or last run (nil before the first)
	running bool
	proxy   *watch.Watcher // the running step's samplers (nil between steps)
	backend *watch.Watcher
	done    scenario.StepInfo // the last finished step, for its TcpExt deltas
	tcpExt  map[string]uint64
}

// NewMetrics returns the lab's collector; labels go on every series.
func NewMetrics(labels map[string]string) *Metrics {
	return &Metrics{base: maps.Clone(labels), gen: metrics.NewGen(labels)}
}

// stepLabels are the labels of a step's series.
func (m *Metrics) stepLabels(s scenario.StepInfo) map[string]string {
	l := maps.Clone(m.base)
	if l == nil {
		l = map[string]string{}
	}
	l["plan"], l["scenario"], l["profile"], l["key"], l["layout"], l["round"] = s.Plan, s.Scenario, s.Profile, s.Key, s.Layout, strconv.Itoa(s.Round)
	return l
}

// StepStart shows the step as running and returns the step's gen
// metrics, which observe its generator run.
func (m *Metrics) StepStart(s scenario.StepInfo) gen.Observer {
	m.gen.SetLabels(m.stepLabels(s))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.step, m.running, m.proxy, m.backend = &s, true, s.Proxy, s.Backend
	return m.gen
}

// StepDone keeps the finished step's standing and TcpExt deltas.
func (m *Metrics) StepDone(s scenario.StepInfo, st *results.Step, _ *results.File) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.step, m.running, m.proxy, m.backend = &s, false, nil, nil
	m.done, m.tcpExt = s, maps.Clone(st.TCPExt)
}

// Describe announces nothing: the series' labels change with the step.
func (m *Metrics) Describe(chan<- *prometheus.Desc) {}

// Collect sends the lab's series, then the generator's.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	step, running, proxy, backend, done, tcpExt := m.step, m.running, m.proxy, m.backend, m.done, m.tcpExt
	m.mu.Unlock()
	if step == nil {
		return
	}
	base := prometheus.Labels(m.base)
	c := func(name, help string, t prometheus.ValueType, v float64, kv ...string) {
		var names, vals []string
		for i := 0; i+1 < len(kv); i += 2 {
			names, vals = append(names, kv[i]), append(vals, kv[i+1])
		}
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, names, base), t, v, vals...)
	}
	s := *step
	stepKV := []string{"plan", s.Plan, "scenario", s.Scenario, "profile", s.Profile, "key", s.Key, "layout", s.Layout, "round", strconv.Itoa(s.Round)}
	r := 0.0
	if running {
		r = 1
	}
	c("loadlab_lab_step_info", "The step now running (1) or, between steps, the last one (0), by its plan, scenario, profile, key, layout and round.", prometheus.GaugeValue, r,
		append(slices.Clone(stepKV), "phase", s.Phase, "seq", strconv.Itoa(s.Seq))...)
	c("loadlab_lab_steps_done", "Steps finished so far (run or replayed from results.json).", prometheus.GaugeValue, float64(s.Done))
	c("loadlab_lab_steps_estimated", "The budget's estimate of all steps of the run (at least the steps done).", prometheus.GaugeValue, float64(s.Steps))
	c("loadlab_lab_steps_to_go", "Steps estimated and not yet done.", prometheus.GaugeValue, float64(max(s.Steps-s.Done, 0)))
	c("loadlab_lab_eta_seconds", "The budget left when the step started or ended.", prometheus.GaugeValue, s.ETA.Seconds())
	for _, g := range []struct {
		role string
		w    *watch.Watcher
	}{{"proxy", proxy}, {"backend", backend}} {
		if g.w == nil {
			continue
		}
		samples := g.w.Samples()
		if len(samples) == 0 {
			continue
		}
		last := samples[len(samples)-1]
		kv := append(slices.Clone(stepKV), "role", g.role)
		c("loadlab_lab_cpu_cores", "CPU cores the role's cgroup used since the previous sample (the step's watcher, every second).", prometheus.GaugeValue, last.CPUCores, kv...)
		c("loadlab_lab_memory_current_bytes", "memory.current of the role's cgroup (page cache included), last sample.", prometheus.GaugeValue, float64(last.MemCurrent), kv...)
		c("loadlab_lab_memory_anon_kernel_bytes", "Anonymous plus kernel memory of the role's cgroup (what it needs under load), last sample.", prometheus.GaugeValue, float64(last.MemAnon+last.MemKernel), kv...)
		if last.TimeWait >= 0 {
			c("loadlab_lab_time_wait", "TIME_WAIT sockets counted for the role (the proxy: in its namespace), last sample.", prometheus.GaugeValue, float64(last.TimeWait), kv...)
		}
		var periods, throttled, waited uint64
		for _, x := range samples {
			periods, throttled, waited = periods+x.NrPeriods, throttled+x.NrThrottled, waited+x.ThrottledNanos
		}
		c("loadlab_lab_cfs_periods_total", "CFS bandwidth periods the role's cgroup ran in during the step (0 without a quota).", prometheus.CounterValue, float64(periods), kv...)
		c("loadlab_lab_cfs_throttled_periods_total", "Periods in which the role's cgroup used up its quota and waited, during the step.", prometheus.CounterValue, float64(throttled), kv...)
		c("loadlab_lab_cfs_throttled_seconds_total", "How long the role's cgroup waited throttled during the step.", prometheus.CounterValue, float64(waited)/1e9, kv...)
	}
	if len(tcpExt) > 0 {
		kv := []string{"plan", done.Plan, "scenario", done.Scenario, "profile", done.Profile, "key", done.Key, "layout", done.Layout, "round", strconv.Itoa(done.Round)}
		for _, k := range slices.Sorted(maps.Keys(tcpExt)) {
			c("loadlab_lab_tcpext_step_delta", "How much a TcpExt counter (/proc/net/netstat) of the proxy's namespace grew over the last finished step.", prometheus.GaugeValue, float64(tcpExt[k]),
				append(slices.Clone(kv), "counter", k)...)
		}
	}
	m.gen.Collect(ch)
}

// observers lists the runner's observers that are set (nil: none).
func observers(page scenario.Observer, m *Metrics) scenario.Observer {
	var ws scenario.Observers
	if page != nil {
		ws = append(ws, page)
	}
	if m != nil {
		ws = append(ws, m)
	}
	if len(ws) == 0 {
		return nil
	}
	return ws
}
