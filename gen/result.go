package gen

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

func latencyOf(h *hdr.Histogram) Latency {
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

// PerSecond is one second of the run (warmup included).
type PerSecond struct {
	T      int    `json:"t"`
	OK     uint64 `json:"ok"`
	Non2xx uint64 `json:"non2xx"`
	Errors uint64 `json:"errors"`
	P99us  int64  `json:"p99_us"`
	Bytes  uint64 `json:"bytes"`
	// TimeWait is the number of the generator's sockets to the target in
	// TIME_WAIT at the end of this second (-1 when it could not be read).
	TimeWait int `json:"time_wait"`
}

// Generator is the generator's account of itself: was it the bottleneck?
type Generator struct {
	CPUs         []int     `json:"cpus"`
	Loops        int       `json:"loops"`
	Busy         []float64 `json:"busy"`       // fraction of wall time each loop's thread was on CPU (measured window)
	CPUSeconds   []float64 `json:"cpu_s"`      // CPU seconds each loop used (measured window)
	LagP99us     int64     `json:"lag_p99_us"` // open loop: how late the loop sent due requests to free connections
	LagMaxus     int64     `json:"lag_max_us"`
	LateSends    uint64    `json:"late_sends"` // requests sent more than 1 ms after their intended time (any cause)
	Dropped      uint64    `json:"dropped"`    // open loop: requests not sent because the pending queue was full
	MaxPending   int       `json:"max_pending"`
	Unfinished   int64     `json:"unfinished"`     // requests still queued or in flight when the run ended
	TimeWaitPeak int       `json:"time_wait_peak"` // most sockets to the target in TIME_WAIT at once, in the generator's namespace
	Unsolicited  uint64    `json:"unsolicited"`    // idle connections dropped because the server sent bytes nobody asked for
	Bottleneck   bool      `json:"bottleneck"`
	Reason       string    `json:"reason"`
	Notes        []string  `json:"notes,omitempty"`
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
	// Engine ran the handshakes: "lean" (gen/tls13), "crypto/tls", "utls".
	Engine string `json:"engine"`
	// ClientKeyShare says whether the client's ECDHE key pair was "reused"
	// (one per loop) or "fresh" (one per handshake).
	ClientKeyShare string `json:"client_key_share"`
}

// Result is the outcome of a run. Field names are the JSON contract read by
// users' scripts; more fields may be added, none renamed.
type Result struct {
	Target         string            `json:"target"`
	Protocol       string            `json:"protocol"` // "http/1.1" or "h3"
	Mode           string            `json:"mode"`     // "closed" or "open"
	Connections    int               `json:"connections"`
	DurationS      float64           `json:"duration_s"` // measured window (warmup excluded)
	WarmupS        float64           `json:"warmup_s"`
	RequestedRate  float64           `json:"requested_rate"`
	AchievedRate   float64           `json:"achieved_rate"` // 2xx completed inside the measured window, per second
	Requests       uint64            `json:"requests"`      // completed + failed, measured window
	OK             uint64            `json:"ok"`
	Status         map[string]uint64 `json:"status"`
	Errors         map[string]uint64 `json:"errors"`
	ErrorSamples   map[string]string `json:"error_samples,omitempty"` // first message per error class
	BytesRead      uint64            `json:"bytes_read"`              // HTTP/1.1: headers + bodies; h3: bodies (headers are QPACK-compressed)
	ThroughputGbps float64           `json:"throughput_gbps"`

	Latency            Latency `json:"latency_us"`
	LatencyUncorrected Latency `json:"latency_uncorrected_us"`

	Handshakes    uint64   `json:"handshakes"`
	HandshakeRate float64  `json:"handshake_rate"`
	HandshakeUs   *Latency `json:"handshake_us,omitempty"`
	TLS           *TLSInfo `json:"tls,omitempty"`
	QUICVersion   string   `json:"quic_version,omitempty"`

	PerSecond   []PerSecond `json:"per_second"`
	Generator   Generator   `json:"generator"`
	Interrupted bool        `json:"interrupted"`

	// Histograms for callers that want more than the fixed percentiles
	// (e.g. the lab's percentile spectrum). Not part of the JSON.
	CorrectedHist   *hdr.Histogram `json:"-"`
	UncorrectedHist *hdr.Histogram `json:"-"`
}

// ErrorCount returns the total of all error classes.
func (r *Result) ErrorCount() uint64 {
	var n uint64
	for _, v := range r.Errors {
		n += v
	}
	return n
}
