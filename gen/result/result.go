package result

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency holds percentiles in microseconds. The JSON names are a contract.
type Latency struct {
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P95  int64   `json:"p95"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

// LatencyOf reads the fixed percentiles of h (all zero when it is empty).
func LatencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:  h.ValueAtQuantile(50),
		P90:  h.ValueAtQuantile(90),
		P95:  h.ValueAtQuantile(95),
		P99:  h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9),
		Max:  h.Max(),
		Mean: h.Mean(),
	}
}

// PerSecond is one second of the run (warmup included), by completion
// time: what completed or was given up in that second.
type PerSecond struct {
	T      int     `json:"t"`
	DurS   float64 `json:"dur_s"` // length of this entry: 1 but for the last, partial one
	OK     uint64  `json:"ok"`
	Non2xx uint64  `json:"non2xx"`
	Errors uint64  `json:"errors"`
	P99us  int64   `json:"p99_us"` // corrected, every outcome of the second
	Maxus  int64   `json:"max_us"`
	Bytes  uint64  `json:"bytes"`
	// Offered (open loop) is the rate the schedule offered in this second,
	// by intended time: the requests due in it (Config.Rate, or what the
	// stages ramp to), this shard's share.
	Offered *float64 `json:"offered,omitempty"`
	// TimeWait is the number of the generator's sockets to the target in
	// TIME_WAIT at the end of this second (-1 when it could not be read).
	TimeWait int `json:"time_wait"`

	SecondMergeable // wall-clock key and histogram (mergeable.go)
}

// SpillMemory is Generator.Spill when the per-second histograms stayed in
// memory.
const SpillMemory = "memory"

// Generator is the generator's account of itself: was it the bottleneck?
//
// Busy, Starved, Idle and CPUSeconds have one entry per loop (HTTP/1.1: each loop
// is a thread pinned to CPUs[i]) or per CPU (HTTP/3). See verdict.go for
// the rule behind Bottleneck.
type Generator struct {
	CPUs       []int     `json:"cpus"`
	Loops      int       `json:"loops"`
	Busy       []float64 `json:"busy"`    // fraction of wall time on CPU (measured window)
	Starved    []float64 `json:"starved"` // fraction of wall time runnable but not running (another task, a softirq or the hypervisor had its CPU)
	Idle       []float64 `json:"idle"`    // fraction of wall time asleep, nothing to do: busy + starved + idle = 1
	CPUSeconds []float64 `json:"cpu_s"`   // CPU seconds used (measured window)
	// Send lag, open loop: on every wakeup that found requests due, how
	// late it came for the earliest of them (measured window).
	LagP50us   int64  `json:"lag_p50_us"`
	LagP95us   int64  `json:"lag_p95_us"`
	LagP99us   int64  `json:"lag_p99_us"`
	LagP999us  int64  `json:"lag_p999_us"`
	LagMaxus   int64  `json:"lag_max_us"`
	LateSends  uint64 `json:"late_sends"` // requests sent more than 1 ms after their intended time (any cause)
	Dropped    uint64 `json:"dropped"`    // open loop: requests evicted unsent from the full pending queue (also errors.dropped)
	MaxPending int    `json:"max_pending"`
	// PacingToleranceUs is Config.PacingTolerance: how late after its
	// intended time a request may be sent so that requests due together
	// leave in one wakeup (0: each at its own time).
	PacingToleranceUs int64 `json:"pacing_tolerance_us"`
	// IO is how the loops drove their sockets ("epoll", "uring"; HTTP/3:
	// "udp"), and IONote why (what Config.IO auto found, or what was asked).
	IO           string `json:"io"`
	IONote       string `json:"io_note"`
	Unfinished   int64  `json:"unfinished"`     // requests still queued or in flight when the drain ended (also errors.timeout)
	TimeWaitPeak int    `json:"time_wait_peak"` // most sockets to the target in TIME_WAIT at once, in the generator's namespace
	Unsolicited  uint64 `json:"unsolicited"`    // idle connections dropped because the server sent bytes nobody asked for
	// Spill is where the per-second histograms waited for the result: the
	// directory of the spill file (unlinked at once), or SpillMemory when
	// no file could be made there (a note says why). Merged: SpillMemory
	// if any shard's were, else the first shard's directory.
	Spill      string `json:"spill,omitempty"`
	Bottleneck bool   `json:"bottleneck"`
	// LagCaveats: send lag material only above the judged quantiles
	// (p99.9): the latency there includes the generator's lateness, the
	// quantiles a row reports do not (verdict.go).
	LagCaveats []LagCaveat `json:"lag_caveats,omitempty"`
	// WakeFloor: when the lag rule fired, how late bare sleeps on the
	// run's CPUs came back just after the run, and whether that explains
	// the lag (wakefloor.go); with Config.WakeProbe, how late they came
	// back during the measured window, in every run. Merged results keep
	// it per shard.
	WakeFloor *WakeFloor `json:"wake_floor,omitempty"`
	Reason    string     `json:"reason"`
	// Notes (and IONote) name the Config fields they are about as
	// {Field}, as usage errors do; Result.Words renders them (the CLI: as
	// its flags).
	Notes []string `json:"notes,omitempty"`
}

// TLSInfo describes the TLS sessions of the run (from the first handshake).
type TLSInfo struct {
	Version   string `json:"version"`
	Cipher    string `json:"cipher"`
	Curve     string `json:"curve"`
	ServerKey string `json:"server_key"`
	Resumed   uint64 `json:"resumed"`
	ZeroRTT   uint64 `json:"zero_rtt,omitempty"` // HTTP/3: requests sent as 0-RTT early data and accepted
	ALPN      string `json:"alpn,omitempty"`
	// Engine is the TLS implementation that ran the handshakes: "lean"
	// (gen/tls13), "crypto/tls", "utls" (the JSON name stays "engine").
	Engine string `json:"engine"`
	// ClientKeyShare says whether the client's ECDHE key pair was "reused"
	// (one per loop) or "fresh" (one per handshake).
	ClientKeyShare string `json:"client_key_share"`
}

// H2Info is what an HTTP/2 run saw of the protocol.
type H2Info struct {
	// ServerMaxStreams is the lowest SETTINGS_MAX_CONCURRENT_STREAMS a
	// connection of the run was given, when it was below Streams (0: never
	// below): the streams a connection then carried at most.
	ServerMaxStreams uint32 `json:"server_max_streams,omitempty"`
	// GoAways counts connections the server ended with GOAWAY (from the
	// warmup's end on); the generator reconnected each.
	GoAways uint64 `json:"goaways"`
	// Refused counts requests of the measured window the server did not
	// process (RST_STREAM REFUSED_STREAM, or a stream above a GOAWAY's
	// last stream id): each went back to the head of the pending queue with
	// its intended time and was sent again; not an outcome.
	Refused uint64 `json:"refused"`
	// ResetCodes splits errors.stream_reset by RST_STREAM error code.
	ResetCodes map[string]uint64 `json:"reset_codes,omitempty"`
	// GoAwayCodes splits GoAways by GOAWAY error code.
	GoAwayCodes map[string]uint64 `json:"goaway_codes,omitempty"`
}

// Result is the outcome of a run. Field names are the JSON contract read by
// users' scripts; more fields may be added, none renamed.
type Result struct {
	Target         string            `json:"target"`
	Protocol       string            `json:"protocol"` // "http/1.1", "h2" or "h3"
	Mode           string            `json:"mode"`     // "closed" or "open"
	Connections    int               `json:"connections"`
	Streams        int               `json:"streams,omitempty"` // h2: concurrent streams per connection (Config.Streams; the server's limit may be lower, see h2)
	DurationS      float64           `json:"duration_s"`        // measured window (warmup excluded)
	WarmupS        float64           `json:"warmup_s"`
	RequestedRate  float64           `json:"requested_rate"`
	AchievedRate   float64           `json:"achieved_rate"` // 2xx completed inside the measured window (whatever their intended time) / window
	Requests       uint64            `json:"requests"`      // every request owed in the measured window (by intended time): ok + non-2xx + errors
	OK             uint64            `json:"ok"`
	Retries        uint64            `json:"retries"` // requests resent once after a kept-alive connection closed before any response byte
	Status         map[string]uint64 `json:"status"`
	Errors         map[string]uint64 `json:"errors"`
	ErrorSamples   map[string]string `json:"error_samples,omitempty"` // first message per error class
	BytesRead      uint64            `json:"bytes_read"`              // HTTP/1.1: headers + bodies; h2 and h3: bodies (headers are HPACK- or QPACK-compressed)
	ThroughputGbps float64           `json:"throughput_gbps"`

	Latency            Latency `json:"latency_us"`             // corrected, every owed request (failures at the time they were given up)
	Latency2xx         Latency `json:"latency_2xx_us"`         // corrected, 2xx responses only
	LatencyUncorrected Latency `json:"latency_uncorrected_us"` // from the actual write, responses only

	Handshakes    uint64   `json:"handshakes"`
	HandshakeRate float64  `json:"handshake_rate"`
	HandshakeUs   *Latency `json:"handshake_us,omitempty"`
	TLS           *TLSInfo `json:"tls,omitempty"`
	QUICVersion   string   `json:"quic_version,omitempty"`
	H2            *H2Info  `json:"h2,omitempty"`

	PerSecond   []PerSecond `json:"per_second"`
	Generator   Generator   `json:"generator"`
	Interrupted bool        `json:"interrupted"`

	// Stages are Config.Stages (the whole run's rates); with them
	// requested_rate is the mean offered rate of the measured window.
	Stages []StageInfo `json:"stages,omitempty"`
	// Targets are Config.Targets' own counts, in file order: each
	// target's owed requests (ok + non-2xx + errors) add up to the
	// totals.
	Targets []TargetResult `json:"targets,omitempty"`

	// Thresholds are Config.Thresholds checked on this result, in order
	// (threshold.go); the CLI exits 3 when one failed.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`

	Mergeable // shard, host, schedule, histograms (mergeable.go)

	// Histograms for callers that want more than the fixed percentiles
	// (e.g. the lab's percentile spectrum). Not part of the JSON.
	CorrectedHist    *hdr.Histogram `json:"-"`
	Corrected2xxHist *hdr.Histogram `json:"-"`
	UncorrectedHist  *hdr.Histogram `json:"-"`
}

// ErrorCount returns the total of all error classes.
func (r *Result) ErrorCount() uint64 {
	var n uint64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// WakeFloor is how late bare sleeps on the run's CPUs came back, measured
// just after a run whose send lag the self-check judged material, or
// during the measured window (During: Config.WakeProbe).
type WakeFloor struct {
	CPUs    []int `json:"cpus"`
	During  bool  `json:"during,omitempty"` // measured during the window, beside the loops
	Sleeps  int64 `json:"sleeps"`           // in all, WakeProbeSleeps per CPU (after the run)
	SleepUs int64 `json:"sleep_us"`         // each
	P50us   int64 `json:"p50_us"`           // overshoot beyond the sleep asked for
	P95us   int64 `json:"p95_us"`
	P99us   int64 `json:"p99_us"`
	Maxus   int64 `json:"max_us"`
	// Quantile is the lag quantile the verdict judged, AtQuantileUs the
	// floor there, LagUs the generator's lag there (beyond the pacing
	// tolerance).
	Quantile     string `json:"quantile"`
	AtQuantileUs int64  `json:"at_quantile_us"`
	LagUs        int64  `json:"lag_us"`
	// Explains: the machine's own lateness is at least WakeFloorShare of
	// the generator's lag at that quantile.
	Explains bool `json:"explains"`
}

// TargetResult is one target's part of a result.
type TargetResult struct {
	Method   string  `json:"method"`
	URL      string  `json:"url"`
	Weight   int     `json:"weight,omitempty"` // Config.TargetWeights
	Requests uint64  `json:"requests"`         // owed in the measured window: ok + non2xx + errors
	OK       uint64  `json:"ok"`
	Non2xx   uint64  `json:"non2xx"`
	Errors   uint64  `json:"errors"`
	Latency  Latency `json:"latency_us"` // corrected, 2 significant figures
	Hist     string  `json:"hist,omitempty"`
}

// ThresholdResult is one threshold's outcome, as results.json records it.
type ThresholdResult struct {
	Threshold string  `json:"threshold"` // as ParseThreshold reads it, e.g. "p99<50ms"
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"` // what was observed, in the limit's unit (µs, share 0..1, count, req/s)
	Limit     float64 `json:"limit"`
	Pass      bool    `json:"pass"`
	// Reason says, when it failed, what was seen against what was allowed
	// (or that it could not be judged).
	Reason string `json:"reason,omitempty"`
}

// LagCaveat is send lag that is material at a quantile above the judged
// ones: the corrected latency there includes the generator's lateness.
type LagCaveat struct {
	Quantile  string  `json:"quantile"` // "p99.9"
	LagUs     int64   `json:"lag_us"`   // send lag at the quantile (beyond the pacing tolerance)
	LatencyUs int64   `json:"latency_us"`
	Share     float64 `json:"share"` // lag over latency
}

// StageInfo is a stage as results.json records it.
type StageInfo struct {
	DurationS float64 `json:"duration_s"`
	Rate      float64 `json:"rate"` // requests/s of the whole run at the stage's end
}
