package result

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Mergeable holds what a result needs so that the results of the shards of
// one run can be merged exactly from their JSON alone (for example from
// `kubectl logs`): which shard of which schedule it is, where it ran, and
// its histograms. It is embedded in Result: its fields are top-level JSON
// names, part of the contract.
type Mergeable struct {
	// Shard is this result's part of the run; nil for a whole run (an
	// unsharded run, or a merged result, whose parts are in Shards).
	Shard *ShardInfo `json:"shard,omitempty"`
	// Host is the name of the machine (or pod) that ran the generator.
	Host string `json:"host,omitempty"`
	// Schedule is what every shard of one run has in common; a Merger refuses
	// results whose schedules differ.
	Schedule *ScheduleInfo `json:"schedule,omitempty"`
	// Histograms are the run's latency histograms, encoded.
	Histograms *EncodedHistograms `json:"histograms,omitempty"`
	// Shards lists the merged results, one per shard, each with its own
	// generator verdict (merged results only).
	Shards []ShardSummary `json:"shards,omitempty"`

	hlogStart time.Time // results read from an HdrHistogram log: the log's start
}

// SecondMergeable is embedded in PerSecond: the second's wall-clock key and
// its histogram, so that per-second series of shards align and merge.
type SecondMergeable struct {
	AtMs int64  `json:"at_ms,omitempty"` // wall-clock start of this second, Unix milliseconds
	Hist string `json:"hist,omitempty"`  // corrected latency of this second (EncodeHist)
}

// ShardInfo is one shard's place in its run.
type ShardInfo struct {
	Index int `json:"index"` // 0-based
	Count int `json:"count"`
}

// orWhole is s, or the whole run (shard 0 of 1) for nil.
func (s *ShardInfo) orWhole() ShardInfo {
	if s == nil {
		return ShardInfo{Index: 0, Count: 1}
	}
	return *s
}

// ScheduleInfo describes the run's global schedule: the same in every
// shard of a run.
type ScheduleInfo struct {
	// Start is the wall-clock time of the schedule's start (request j is
	// due at Start + j/Rate): the --start-at time when one was given, else
	// when the run began.
	Start       time.Time `json:"start"`
	Rate        float64   `json:"rate"`       // requests/s of the whole run; 0 = closed loop
	DurationS   float64   `json:"duration_s"` // configured run time, warmup included
	WarmupS     float64   `json:"warmup_s"`
	Requests    int       `json:"requests,omitempty"` // Config.Requests of the whole run (0 = no limit)
	Connections int       `json:"connections"`        // of the whole run, before the shards' split
	Shards      int       `json:"shards"`             // shard count (1 = not sharded)
	// StartSkewMs is, in a merged result, how far apart the shards'
	// schedule starts were (0 when they were given one absolute time).
	StartSkewMs float64 `json:"start_skew_ms,omitempty"`
}

// EncodedHistograms are HdrHistograms in the library's V2 compressed
// encoding, base64 (the format of HdrHistogram interval logs), values in
// microseconds.
type EncodedHistograms struct {
	Corrected   string `json:"corrected"`           // latency_us: from the intended send time
	OK          string `json:"ok,omitempty"`        // corrected, 2xx responses only
	Uncorrected string `json:"uncorrected"`         // latency_uncorrected_us: from the actual write
	Handshake   string `json:"handshake,omitempty"` // handshake_us
}

// ShardSummary is one merged input: its shard, where it ran, its own
// numbers and its own generator verdict.
type ShardSummary struct {
	Source       string    `json:"source,omitempty"` // the file it was read from
	Shard        ShardInfo `json:"shard"`
	Host         string    `json:"host,omitempty"`
	Start        time.Time `json:"start,omitzero"`
	DurationS    float64   `json:"duration_s"`
	Requests     uint64    `json:"requests"`
	OK           uint64    `json:"ok"`
	Errors       uint64    `json:"errors"`
	AchievedRate float64   `json:"achieved_rate"`
	Latency      Latency   `json:"latency_us"`
	Generator    Generator `json:"generator"`
	Interrupted  bool      `json:"interrupted,omitempty"`
}

// EncodeHist returns h in the V2 compressed encoding, base64.
func EncodeHist(h *hdr.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist decodes a histogram written by EncodeHist (or any
// HdrHistogram V2 compressed base64 encoding); "" gives nil.
func DecodeHist(s string) (*hdr.Histogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if h.TotalCount() < 0 {
		return nil, fmt.Errorf("decode histogram: negative total count")
	}
	return h, nil
}
