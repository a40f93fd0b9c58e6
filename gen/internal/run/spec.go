package run

import (
	"net/netip"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// Spec is a run as gen's Prepare made it from a Config: every field
// checked, the text parsed (URL, headers, targets, stages, source
// addresses), the defaults filled. The core and the engines read it and
// nothing writes it after Prepare, so one Spec may be run more than once,
// one run at a time. The field meanings are gen.Config's.
type Spec struct {
	Reqs    []Req   // the run's requests: the Config's one, or one per target
	Pick    []int32 // weighted target table (nil: round-robin, or one request)
	Weights []int   // the targets' weights, for the result (nil: none)
	Target  Target  // the first request's, where the connections go

	Pacer  *Pacer             // the offered rate (nil: closed loop)
	Rate   float64            // the constant rate asked for (0: closed loop, or stages), for the result's schedule
	Stages []result.StageInfo // the stages asked for, for the result

	Connections     int // the whole run's (all shards)
	Requests        int // the whole run's; 0: no limit
	Duration        time.Duration
	Warmup          time.Duration
	Timeout         time.Duration
	CPUs            pin.CPUSet // nil: every allowed CPU
	MaxPending      int        // 0: rate x timeout, within 1,000..1,000,000
	PacingTolerance time.Duration
	IO              string // as asked: epoll, uring, auto, or "" for IODefault
	IODefault       string // what "" means (auto; tests run each path)
	NewConn         bool
	CloseRST        bool
	SrcAddrs        []netip.Addr
	TLS             TLS
	HTTP2           bool
	HTTP3           bool
	Streams         int // HTTP/2: concurrent streams per connection
	VerifySHA256    []byte
	NetNS           string
	AllowRemote     bool
	WakeProbe       bool
	Shard           int // this generator's index among Shards
	Shards          int // at least 1
	StartAt         time.Time
	StartTolerance  time.Duration
	Machine         string // the result's host ("" = the hostname)

	// UringFault (tests only) makes the loops' io_uring fail: it is asked
	// before each submission entry is taken ("sqe") and each
	// io_uring_enter ("enter"); an error is that call's failure.
	UringFault func(call string) error
	// ReadHook (tests only) is handed the bytes each read of a loop
	// returned (each datagram, for HTTP/3), before they are parsed: a
	// panic in it is a panic of the loop.
	ReadHook func(b []byte)
}

// Req is one request of a run, parsed once (the Config's own, or a
// target's): what the engines serialize.
type Req struct {
	Method  string
	Target  Target
	Headers []Header
	Body    []byte
}

// Header is one request header line, split once.
type Header struct{ Name, Value string }

// TLS is how the run's handshakes go (gen.TLSOptions, checked and
// parsed).
type TLS struct {
	Version       uint16   // tls.VersionTLS12 or tls.VersionTLS13
	Curves        []string // key-exchange groups, --curves names (lower case)
	Insecure      bool
	CAFile        string
	SNI           string // the server name ("" = the target's host)
	Hello         string // "go", or a uTLS preset (HelloPreset)
	Resume        bool
	ZeroRTT       bool
	FreshKeyShare bool
	Suites        []uint16 // lean: TLS 1.3 suites to offer (nil: all)
	Lean          bool     // handshakes by package tls13 (for HTTP/3: the lean QUIC client)
	LeanWhy       string   // why the lean implementation does not apply, when it does not
	ALPN          string   // the one protocol offered
}

// Open reports whether the run is an open loop (it has a rate).
func (s *Spec) Open() bool { return s.Pacer != nil }

// ShardConns is this shard's part of Connections.
func (s *Spec) ShardConns() int { return Share(s.Connections, s.Shard, s.Shards) }

// ShardRate is this shard's part of the peak rate, requests/s (0: closed
// loop).
func (s *Spec) ShardRate() float64 {
	if s.Pacer == nil {
		return 0
	}
	return s.Pacer.Peak() / float64(s.Shards)
}

// offered is this shard's part of the requests the whole run's schedule
// offers from t to t+1 s (open loop), requests/s.
func (s *Spec) offered(t float64) float64 {
	return (s.Pacer.Count(t+1) - s.Pacer.Count(t)) / float64(s.Shards)
}

// TargetOf returns the target of global request j.
func (s *Spec) TargetOf(j int64) int32 {
	switch {
	case len(s.Reqs) <= 1:
		return 0
	case s.Pick != nil:
		return s.Pick[j%int64(len(s.Pick))]
	}
	return int32(j % int64(len(s.Reqs)))
}

// Share returns part i of total split into n parts that differ by at most
// 1, the larger parts going to the lowest indexes (gen.Shard.Share).
func Share(total, i, n int) int {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}

// HasHeader reports whether hs set name (case-insensitive).
func HasHeader(hs []Header, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// ScanEvery is how often a loop looks for requests past their timeout and
// connections whose backoff has passed: a twentieth of the timeout,
// between 1 ms and 10 ms, ns.
func (s *Spec) ScanEvery() int64 {
	return max(int64(time.Millisecond), min(int64(s.Timeout)/20, int64(10*time.Millisecond)))
}

// Spec.IO values (gen.Config.IO).
const (
	IOEpoll = "epoll"
	IOUring = "uring"
	IOAuto  = "auto"
)
