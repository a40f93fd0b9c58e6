package gen

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	utls "github.com/refraction-networking/utls"

	"github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/gen/tls13"
	"github.com/loadlab/loadlab/pin"
)

// CloseMode says how the generator closes a connection it is done with.
type CloseMode uint8

const (
	// CloseFIN closes normally: the generator, closing first, keeps the
	// socket in TIME_WAIT for 60 s.
	CloseFIN CloseMode = iota
	// CloseRST closes with SO_LINGER 0: the kernel sends RST and keeps no
	// TIME_WAIT on the generator's side. The server sees a reset instead of
	// an orderly close.
	CloseRST
)

// Second is one second of a run as the live progress sees it.
type Second struct {
	T          int     // seconds since the start
	OK         uint64  // 2xx responses completed in this second
	Non2xx     uint64  // other responses completed in this second
	Errors     uint64  // failed requests in this second
	P99us      int64   // corrected p99 of responses completed in this second
	P99SoFarUs int64   // corrected p99 of every response so far (warmup included)
	Elapsed    float64 // seconds since the start, at the time of the report
}

// Config describes one run. The zero value is not usable: set at least URL;
// Defaults fills the rest the way the CLI does.
type Config struct {
	URL         string        // http:// or https:// target
	Method      string        // default GET
	Headers     []string      // extra "Name: value" lines; Host replaces the default Host
	Body        []byte        // request body (Content-Length is set)
	Connections int           // connections, spread over the loops (default 50)
	Duration    time.Duration // total run time, warmup included (default 10s)
	Requests    int           // stop after starting this many requests (0 = no limit; the duration still bounds the run)
	Warmup      time.Duration // leading part of the run left out of the results
	Timeout     time.Duration // per request, from when work on it begins (connect, handshake, write); default 10s
	Rate        float64       // requests/s over all loops; 0 = closed loop
	CPUs        pin.CPUSet    // one event loop per CPU; default: every allowed CPU
	MaxPending  int           // open loop: due but unsent requests kept (default rate x timeout, min 1000)
	// PacingTolerance (open loop): how late after its intended time a
	// request may be sent so that requests due close together leave in one
	// wakeup. The loops wake at multiples of it since the start and send
	// everything due, never early; 0 sends each request at its own time.
	// The lateness is in the corrected latency (it counts from the intended
	// time) and in the send lag; the self-check judges only lag beyond it.
	PacingTolerance time.Duration
	// IO is how the HTTP/1.1 and HTTP/2 loops drive their sockets: IOEpoll
	// (readiness, a system call per read and write), IOUring (io_uring:
	// completions, one io_uring_enter per wakeup) or IOAuto (the default:
	// io_uring for HTTP/1.1 closed loops and paced open loops where the
	// kernel offers what the loops need; epoll for HTTP/2, for an open loop
	// at pacing tolerance 0, and as the fallback; see chooseIO). The
	// result's generator.io says which ran and generator.io_note why.
	IO           string
	NewConn      bool         // a new connection (and TLS handshake) per request
	Close        CloseMode    // how the generator closes connections
	SrcAddrs     []netip.Addr // local addresses new connections bind to, round-robin (HTTP/3: each connection's UDP socket)
	TLS          TLSOptions   // for https:// targets
	HTTP3        bool         // HTTP/3 over QUIC (https:// only)
	HTTP2        bool         // HTTP/2: ALPN h2 over TLS for https://, h2c with prior knowledge for http://
	Streams      int          // HTTP/2: concurrent streams per connection (0 = DefaultStreams, or 1 with NewConn)
	VerifySHA256 []byte       // 32 bytes: every body must hash to this
	NetNS        string       // network namespace path to run the loops in ("" = current)
	AllowRemote  bool         // allow targets off this machine (default: loopback, this host's addresses and its network namespaces only: see checkOnMachine)
	// WakeProbe measures the machine's wake floor during the measured
	// window, beside each loop on its CPU, into Generator.WakeFloor
	// (wakefloor.go); without it the floor is probed after a run whose lag
	// rule fired, and only then.
	WakeProbe bool

	// Shard, if set, runs only this generator's part of the schedule (see
	// Shard); Connections and Requests are then the whole run's.
	Shard Shard
	// StartAt, if set, is the wall-clock time the schedule starts (every
	// shard of a run is given the same one); the run waits for it and fails
	// if it is ready later than StartTolerance (0 = DefaultStartTolerance).
	StartAt        time.Time
	StartTolerance time.Duration
	// Host names the machine in the result (default: the hostname).
	Host string
	// Thresholds are checked on the result at the end of the run
	// (Result.Thresholds; see threshold.go).
	Thresholds []result.Threshold
	// Stages, if set, ramp the open-loop rate (stages.go) instead of Rate,
	// which must then be 0; Duration is their sum (Defaults sets it).
	Stages []Stage
	// Targets, if set, are the requests of the run, sent round-robin or by
	// TargetWeights (targets.go); URL is then the first target's (or
	// empty), Method is each target's own, Headers go with every target,
	// Body with those that have none.
	Targets       []Request
	TargetWeights []int

	// Progress, if set, is called once a second from a goroutine of the run.
	Progress func(Second)
	// Live, if set, is called once a second from a goroutine of the run
	// with the run's state so far (a live exporter: gen/metrics), and once
	// more after the run, with Final set, from the result's own tallies.
	// It must return quickly and not keep the Live past the call.
	Live func(*Live)
	// HdrLog, if set, receives an HdrHistogram interval log (one interval
	// per second, corrected latency in microseconds).
	HdrLog io.Writer

	// uringFault (tests only) makes the loops' io_uring fail: it is asked
	// before each submission entry is taken ("sqe") and each io_uring_enter
	// ("enter"); an error is that call's failure.
	uringFault func(call string) error
	// readHook (tests only) is handed the bytes each read of a loop
	// returned (each datagram, for HTTP/3), before they are parsed: a
	// panic in it is a panic of the loop.
	readHook func(b []byte)
}

// TLSOptions configures TLS for https:// targets.
type TLSOptions struct {
	Version     string   // "1.2" or "1.3" (default)
	Curves      []string // key-exchange groups, default ["x25519"] (TLS 1.2: x25519, p256)
	Insecure    bool     // skip certificate verification
	CAFile      string   // PEM roots to verify the server with
	SNI         string   // server name (default: the URL host)
	ClientHello string   // "go" (default), "chrome" or "firefox" (uTLS presets)
	Resume      bool     // allow session resumption on new connections
	ZeroRTT     bool     // HTTP/3: send early data on resumed connections
	// Engine is the TLS implementation that runs the handshakes: "auto"
	// (default: lean where it applies), "lean" (package tls13: TLS 1.3,
	// ClientHello go, no Resume, x25519/p256) or "std" (crypto/tls, or
	// uTLS for presets).
	Engine        string
	FreshKeyShare bool     // lean: a new key pair per handshake (default: one per loop, reused)
	Ciphers       []string // lean: TLS 1.3 suites to offer, in order (default: all three)
}

// maxMaxPending bounds --max-pending: the pending queue is allocated up
// front, 8 bytes per entry.
const maxMaxPending = 10_000_000

// The defaults of a run: Defaults fills them in and the CLI's flags start
// from them.
const (
	DefaultMethod      = "GET"
	DefaultConnections = 50
	DefaultDuration    = 10 * time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultTLSVersion  = "1.3"
	DefaultClientHello = "go"
	// DefaultStreams is HTTP/2's concurrent streams per connection, as
	// h2load's -m: with 1 an HTTP/2 run would measure a connection per
	// request in flight, which is HTTP/1.1's shape, not what HTTP/2 is for;
	// 10 multiplexes like a browser page or a gRPC client does, and stays
	// below every server's SETTINGS_MAX_CONCURRENT_STREAMS default (nginx
	// and HAProxy 128, Go 250, h2o 100). See docs/gen.md, HTTP/2.
	DefaultStreams = 10
	// DefaultPacingTolerance is 0: each open-loop request leaves at its own
	// intended time, so the generator adds nothing to the latency it
	// measures; raise it (1 ms is what wrk2 and h2load do) when the
	// generator's CPU is the limit.
	DefaultPacingTolerance = time.Duration(0)
	// DefaultIO: see Config.IO.
	DefaultIO = IOAuto
)

// Config.IO values.
const (
	IOEpoll = "epoll"
	IOUring = "uring"
	IOAuto  = "auto"
)

// Defaults fills unset fields with the defaults above (TLS 1.2 also offers
// P-256).
func (c *Config) Defaults() {
	if c.Method == "" {
		c.Method = DefaultMethod
	}
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if c.Duration == 0 && len(c.Stages) > 0 {
		c.Duration = StagesDuration(c.Stages)
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.TLS.Version == "" {
		c.TLS.Version = DefaultTLSVersion
	}
	if len(c.TLS.Curves) == 0 {
		c.TLS.Curves = []string{"x25519"}
		if c.TLS.Version == "1.2" {
			// TLS 1.2 servers with an ECDSA P-256 certificate need P-256 in
			// supported_groups (OpenSSL refuses the handshake otherwise).
			c.TLS.Curves = append(c.TLS.Curves, "p256")
		}
	}
	if c.TLS.ClientHello == "" {
		c.TLS.ClientHello = DefaultClientHello
	}
	if c.TLS.Engine == "" {
		c.TLS.Engine = "auto"
	}
	if c.HTTP2 && c.Streams == 0 {
		c.Streams = DefaultStreams
		if c.NewConn {
			c.Streams = 1
		}
	}
}

// validateH2 checks the options that HTTP/2 adds or that only make sense
// with it. Streams 0 is left for Defaults (DefaultStreams, 1 with NewConn).
func (c *Config) validateH2() error {
	if !c.HTTP2 {
		if c.Streams != 0 {
			return fieldErr("Streams", "is HTTP/2's streams per connection: add {HTTP2}, or drop it")
		}
		return nil
	}
	if c.HTTP3 {
		return fieldErr("HTTP2", "and {HTTP3} exclude each other: pick one protocol")
	}
	if c.Streams < 0 || c.Streams > h2.MaxStreamsLimit {
		return fieldErr("Streams", "must be between 1 and %d (got %d)", h2.MaxStreamsLimit, c.Streams)
	}
	if c.NewConn && c.Streams > 1 {
		return fieldErr("Streams", "%d with {NewConn}: a new connection per request carries one stream; drop {Streams} or {NewConn}", c.Streams)
	}
	return nil
}

// alpn is what the TLS handshake offers: h2 alone with HTTP2 (a server
// that answers with another protocol, or none, fails the connection as a
// tls error), else http/1.1.
func (c *Config) alpn() string {
	if c.HTTP2 {
		return "h2"
	}
	return "http/1.1"
}

func (c *Config) openLoop() bool { return c.Rate > 0 || len(c.Stages) > 0 }

// validateStart checks the shard and the start time. A start time already
// past by more than the tolerance is refused here, before any work: the
// run would not be synchronised with its other shards.
func (c *Config) validateStart(now time.Time) error {
	if err := c.Shard.validate(); err != nil {
		return err
	}
	if n := c.Shard.count(); n > 1 && c.Connections < n {
		return fieldErr("Connections", "%d connections cannot be split over %d shards: every shard needs at least one", c.Connections, n)
	}
	if n := c.Shard.count(); n > 1 && c.Requests > 0 && c.Requests < n {
		return fieldErr("Requests", "%d requests cannot be split over %d shards: every shard needs at least one", c.Requests, n)
	}
	if c.StartTolerance < 0 {
		return fieldErr("StartTolerance", "must be >= 0 (got %v)", c.StartTolerance)
	}
	if c.StartAt.IsZero() {
		return nil
	}
	tol := c.startTolerance()
	switch ahead := c.StartAt.Sub(now); {
	case ahead < -tol:
		return fieldErr("StartAt", "%s is %v in the past (tolerance %v): give a time far enough ahead for every shard to be ready",
			c.StartAt.UTC().Format(time.RFC3339Nano), (-ahead).Round(time.Millisecond), tol)
	case ahead > maxStartAhead:
		return fieldErr("StartAt", "%s is %v ahead, more than %v: check the date and time zone",
			c.StartAt.UTC().Format(time.RFC3339Nano), ahead.Round(time.Second), maxStartAhead)
	}
	return nil
}

func (c *Config) startTolerance() time.Duration {
	if c.StartTolerance == 0 {
		return DefaultStartTolerance
	}
	return c.StartTolerance
}

// shardConnections is this shard's part of Config.Connections.
func (c *Config) shardConnections() int { return c.Shard.Share(c.Connections) }

// curveNames maps --curves names to Go's group IDs.
var curveNames = map[string]tls.CurveID{
	"x25519":         tls.X25519,
	"p256":           tls.CurveP256,
	"p384":           tls.CurveP384,
	"p521":           tls.CurveP521,
	"x25519mlkem768": tls.X25519MLKEM768,
}

// helloPresets maps --client-hello names to uTLS ClientHello presets.
var helloPresets = map[string]utls.ClientHelloID{
	"chrome":  utls.HelloChrome_Auto,
	"firefox": utls.HelloFirefox_Auto,
}

func (c *Config) validateTLS() error {
	t := c.TLS
	if t.Version != "1.2" && t.Version != "1.3" {
		return fieldErr("TLS.Version", "bad version %q: use 1.2 or 1.3", t.Version)
	}
	for _, name := range t.Curves {
		if _, ok := curveNames[strings.ToLower(name)]; !ok {
			return fieldErr("TLS.Curves", "unknown curve %q: use x25519, p256, p384, p521 or x25519mlkem768", name)
		}
	}
	if _, ok := helloPresets[t.ClientHello]; !ok && t.ClientHello != "go" {
		return fieldErr("TLS.ClientHello", "unknown %q: use go, chrome or firefox", t.ClientHello)
	}
	if t.CAFile != "" {
		if _, err := os.ReadFile(t.CAFile); err != nil {
			return fieldErr("TLS.CAFile", "cannot read %s: %v", t.CAFile, unwrapPathError(err))
		}
	}
	for _, name := range t.Ciphers {
		if tls13.SuiteByName(strings.ToLower(name)) == nil && tls13.SuiteByName(name) == nil {
			return fieldErr("TLS.Ciphers", "unknown cipher suite %q: use aes128gcm, aes256gcm or chacha20 (TLS 1.3 suites)", name)
		}
	}
	_, _, err := c.leanTLS()
	return err
}

// leanH3MaxRequest bounds the lean QUIC client's request (method, URL and
// header lines): gen/quic sends it in one packet, with room to spare in a
// 1200-byte datagram.
const leanH3MaxRequest = 900

// leanH3RequestSize is about what the request's field section takes.
func leanH3RequestSize(c *Config) int {
	n := len(c.Method) + len(c.URL)
	for _, h := range c.Headers {
		n += len(h)
	}
	return n
}

// leanTLS decides whether handshakes use package tls13 (lean) or
// crypto/tls and uTLS. why says, when lean does not apply, what prevents
// it (for the result's notes).
func (c *Config) leanTLS() (lean bool, why string, err error) {
	t := c.TLS
	switch t.Engine {
	case "", "auto", "lean", "std":
	default:
		return false, "", fieldErr("TLS.Engine", "unknown %q: use auto, lean or std", t.Engine)
	}
	switch {
	case t.Engine == "std":
		why = "{TLS.Engine} std"
	case c.HTTP3 && len(c.Body) > 0:
		why = "HTTP/3 with a request body (the lean QUIC client sends requests without one)"
	case c.HTTP3 && leanH3RequestSize(c) > leanH3MaxRequest:
		why = fmt.Sprintf("HTTP/3 with a request over %d bytes (the lean QUIC client sends each request in one packet)", leanH3MaxRequest)
	case c.HTTP3 && len(c.Targets) > 0:
		why = "HTTP/3 with {Targets} (the lean QUIC client sends one request line)"
	case c.HTTP3 && t.ZeroRTT:
		why = "HTTP/3 with {TLS.ZeroRTT}"
	case t.Version != "1.3":
		why = "{TLS.Version} " + t.Version
	case t.ClientHello != "go" && t.ClientHello != "":
		why = "{TLS.ClientHello} " + t.ClientHello
	case t.Resume:
		why = "{TLS.Resume} (session tickets)"
	default:
		for _, n := range t.Curves {
			if n := strings.ToLower(n); n != "x25519" && n != "p256" {
				why = "{TLS.Curves} " + n + " (the lean TLS implementation has x25519 and p256)"
				break
			}
		}
	}
	lean = why == ""
	if t.Engine == "lean" && !lean {
		return false, why, fieldErr("TLS.Engine", "lean does not apply with %s: it runs TLS 1.3 handshakes with {TLS.ClientHello} go, no {TLS.Resume}, {TLS.Curves} x25519 or p256", why)
	}
	if len(t.Ciphers) > 0 && !lean {
		return false, why, fieldErr("TLS.Ciphers", "needs the lean TLS 1.3 implementation, which does not apply with %s (crypto/tls does not let TLS 1.3 suites be chosen)", why)
	}
	return lean, why, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validateThresholds refuses a threshold the run cannot judge: a share of
// the offered rate needs one (Rate or Stages).
func (c *Config) validateThresholds() error {
	for _, t := range c.Thresholds {
		if t.NeedsOffered() && !c.openLoop() {
			return fieldErr("Thresholds", "%s compares with the offered rate, and a closed-loop run has none: give {Rate} (or {Stages}), or a rate in requests/s such as rate>=5000", t)
		}
		if !t.KnownOp() {
			return fieldErr("Thresholds", "%s: unknown operator %q: use <, <=, > or >=", t, t.Op)
		}
	}
	return nil
}
