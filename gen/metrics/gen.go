package metrics

import (
	"sort"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/gen/result"
)

// Gen exposes a generator run to Prometheus: pass it to gen.Run as an
// observer (gen.Observer) and register it. It keeps a copy of the run's last Live
// (never the run's histograms themselves), so a scrape costs the run
// nothing; the copy is made once a second on the run's aggregator
// goroutine, off the loops.
//
// Its label set may change between runs (SetLabels: the lab's step), so
// it is an unchecked collector: Describe announces nothing.
type Gen struct {
	mu     sync.Mutex
	labels prometheus.Labels
	snap   *genSnap // the last Live; before the run's first second, zeros
}

type genSnap struct {
	lv          result.Live // histograms, CPUs and the second cleared: copied below
	cpus        []result.LiveCPU
	offered     float64 // the last second's, open loop
	corrected   hist
	uncorrected hist
}

// NewGen returns a collector whose series all carry labels.
func NewGen(labels map[string]string) *Gen {
	return &Gen{labels: prometheus.Labels(clone(labels)), snap: zeroSnap()}
}

// zeroSnap is a run before its first second: every count 0, so that the
// series exist from the start and increase() sees them begin at 0.
func zeroSnap() *genSnap {
	return &genSnap{corrected: histOf(nil), uncorrected: histOf(nil)}
}

// SetLabels starts a new run under labels: the previous run's series go
// (Prometheus marks them stale), the new run's begin at 0.
func (g *Gen) SetLabels(labels map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.labels, g.snap = prometheus.Labels(clone(labels)), zeroSnap()
}

// Second takes a run's Live at the end of a second (gen.Observer).
func (g *Gen) Second(lv *result.Live) { g.Observe(lv) }

// End takes the run's Final Live (gen.Observer).
func (g *Gen) End(lv *result.Live) { g.Observe(lv) }

// Observe takes a run's Live. Safe for concurrent use with scrapes.
func (g *Gen) Observe(lv *result.Live) {
	s := &genSnap{lv: *lv, cpus: append([]result.LiveCPU(nil), lv.CPUs...), corrected: histOf(lv.Corrected), uncorrected: histOf(lv.Uncorrected)}
	if sec := lv.Second; sec != nil && sec.Offered != nil {
		s.offered = *sec.Offered
	}
	s.lv.Corrected, s.lv.Uncorrected, s.lv.CPUs, s.lv.Second = nil, nil, nil, nil
	s.lv.Tally.Status, s.lv.Tally.Errors = clone(lv.Tally.Status), clone(lv.Tally.Errors)
	s.lv.Tally.Samples = nil
	g.mu.Lock()
	g.snap = s
	g.mu.Unlock()
}

// Describe announces nothing: Gen is unchecked (its labels change).
func (g *Gen) Describe(chan<- *prometheus.Desc) {}

// Collect sends the last Live as metrics.
func (g *Gen) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	s, labels := g.snap, g.labels
	g.mu.Unlock()
	m := emitter{ch: ch, labels: labels}
	lv := &s.lv
	t := lv.Tally
	running := 1.0
	if lv.Final {
		running = 0
	}
	m.gauge("loadlab_gen_running", "1 while the run goes, 0 once it has ended (the values are then the result's).", running)
	m.gauge("loadlab_gen_elapsed_seconds", "Seconds since the run started (warmup included).", lv.Elapsed)
	m.counter("loadlab_gen_requests_total", "Requests owed in the measured window that have an outcome: 2xx + other statuses + errors (results.json requests).", float64(t.Requests))
	m.counter("loadlab_gen_ok_total", "2xx responses in the measured window (results.json ok).", float64(t.OK))
	for _, code := range sortedKeys(t.Status) {
		m.counter("loadlab_gen_responses_total", "Responses in the measured window by status code (results.json status).", float64(t.Status[code]), "code", code)
	}
	for _, class := range sortedKeys(t.Errors) {
		m.counter("loadlab_gen_errors_total", "Requests that ended in an error, by class, measured window (results.json errors).", float64(t.Errors[class]), "class", class)
	}
	m.counter("loadlab_gen_read_bytes_total", "Response bytes read (header and body), measured window (results.json bytes_read).", float64(t.BytesRead))
	m.counter("loadlab_gen_written_bytes_total", "Request bytes written by the loops, the whole run (TLS records excluded; HTTP/3: not counted).", float64(lv.BytesWritten))
	m.counter("loadlab_gen_handshakes_total", "Completed connection setups that count as handshakes (TLS, or a new connection per request), measured window.", float64(t.Handshakes))
	m.counter("loadlab_gen_connections_opened_total", "Connections opened, the whole run (HTTP/3: established).", float64(lv.Dials))
	m.counter("loadlab_gen_retries_total", "Requests sent again once on a new connection (kept-alive connection closed before any byte), measured window.", float64(t.Retries))
	m.gauge("loadlab_gen_offered_rate", "Requests per second the schedule made due in the last second (open loop; 0 in a closed loop).", s.offered)
	m.gauge("loadlab_gen_achieved_rate", "2xx responses per second in the last second (after the run: results.json achieved_rate).", lv.Achieved)
	m.gauge("loadlab_gen_open_connections", "Connections open at the end of the last second.", float64(lv.Open))
	m.gauge("loadlab_gen_in_flight", "Requests sent and not yet answered.", float64(lv.InFlight))
	m.gauge("loadlab_gen_pending", "Open loop: requests due and not yet sent (every connection busy).", float64(lv.Pending))
	m.gauge("loadlab_gen_pacing_lag_max_seconds", "Open loop: how late the latest wakeup for a due request came in the last second.", float64(lv.LagMaxUs)/1e6)
	for _, c := range s.cpus {
		cpu := strconv.Itoa(c.CPU)
		const help = "The generator's own CPU account per loop CPU over the last second (after the run: the measured window): busy + starved + idle = 1."
		m.gauge("loadlab_gen_cpu_share", help, c.Busy, "cpu", cpu, "state", "busy")
		m.gauge("loadlab_gen_cpu_share", help, c.Starved, "cpu", cpu, "state", "starved")
		m.gauge("loadlab_gen_cpu_share", help, c.Idle, "cpu", cpu, "state", "idle")
	}
	m.histogram("loadlab_gen_latency_seconds", "Latency from each request's intended send time (coordinated omission corrected), every owed outcome of the measured window, errors at the time they were given up.", s.corrected)
	m.histogram("loadlab_gen_latency_uncorrected_seconds", "Latency from the actual write to the response, responses of the measured window.", s.uncorrected)
}

// emitter sends const metrics with a label set.
type emitter struct {
	ch     chan<- prometheus.Metric
	labels prometheus.Labels
}

func (e emitter) desc(name, help string, kv []string) (*prometheus.Desc, []string) {
	var names, values []string
	for i := 0; i+1 < len(kv); i += 2 {
		names, values = append(names, kv[i]), append(values, kv[i+1])
	}
	return prometheus.NewDesc(name, help, names, e.labels), values
}

func (e emitter) counter(name, help string, v float64, kv ...string) {
	d, vals := e.desc(name, help, kv)
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, vals...)
}

func (e emitter) gauge(name, help string, v float64, kv ...string) {
	d, vals := e.desc(name, help, kv)
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, vals...)
}

func (e emitter) histogram(name, help string, h hist, kv ...string) {
	d, vals := e.desc(name, help, kv)
	e.ch <- prometheus.MustNewConstHistogram(d, h.count, h.sum, h.cum, vals...)
}

func clone[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
