package gen

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/tls13"
	"github.com/loadlab/loadlab/internal/fields"
	"github.com/loadlab/loadlab/pin"
	utls "github.com/refraction-networking/utls"
	"golang.org/x/sys/unix"
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
	AllowRemote  bool         // allow targets reached through a gateway (default: loopback and directly attached networks only)
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
	Thresholds []Threshold
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
	// HdrLog, if set, receives an HdrHistogram interval log (one interval
	// per second, corrected latency in microseconds).
	HdrLog io.Writer

	// Set by Validate: the URL and the headers, parsed once for the engines;
	// the requests (one, or one per target) and the weighted target table.
	target  Target
	headers []Header
	reqs    []reqSpec
	pick    []int32
	rampFn  *ramp // Stages' rate function

	// uringFault (tests only) makes the loops' io_uring fail: it is asked
	// before each submission entry is taken ("sqe") and each io_uring_enter
	// ("enter"); an error is that call's failure.
	uringFault func(call string) error
}

// Header is one request header line, split once.
type Header struct{ Name, Value string }

// has reports whether the headers set name (case-insensitive).
func hasHeader(hs []Header, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
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
	// Engine runs the handshakes: "auto" (default: lean where it applies),
	// "lean" (package tls13: TLS 1.3, --client-hello go, no --resume,
	// x25519/p256) or "std" (crypto/tls, or uTLS for presets).
	Engine        string
	FreshKeyShare bool     // lean: a new key pair per handshake (default: one per loop, reused)
	Ciphers       []string // lean: TLS 1.3 suites to offer, in order (default: all three)
}

// maxMaxPending bounds --max-pending: the pending queue is allocated up
// front, 8 bytes per entry.
const maxMaxPending = 10_000_000

// UsageError is an error in a Config: the caller's input, not the run, is at
// fault. The CLI exits 2 on it.
//
// Msg names the Config fields it is about as {Field}, e.g. "{TLS.ZeroRTT}
// needs {TLS.Resume}". Error writes them as the field names; a caller with
// other names for them (the CLI: its flags) words the message with Words.
type UsageError struct {
	Field string // the Config field at fault, "" if none in particular
	Msg   string
}

func (e *UsageError) Error() string { return e.Words(nil) }

// Words renders the message with name(field) for every field it names
// (nil: the Config field names), prefixed by the field at fault.
func (e *UsageError) Words(name func(field string) string) string {
	msg := fields.Words(e.Msg, name)
	if e.Field == "" {
		return msg
	}
	f := e.Field
	if name != nil {
		f = name(f)
	}
	return f + ": " + msg
}

// usage is a UsageError not tied to one field.
func usage(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// fieldErr is a UsageError about field; format may name fields as {Field}.
func fieldErr(field, format string, args ...any) error {
	return &UsageError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

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

// Validate checks every field before any work starts, and parses the URL
// and the headers once for the engines. Errors are UsageErrors with one line
// that says what is wrong and what to do.
func (c *Config) Validate() error {
	raw := c.URL
	if raw == "" && len(c.Targets) > 0 {
		raw = c.Targets[0].URL
	}
	t, err := ParseTarget(raw)
	if err != nil {
		return err
	}
	c.target = t
	if c.Method == "" || strings.ContainsAny(c.Method, " \r\n\t") {
		return fieldErr("Method", "bad method %q: use a token such as GET or POST", c.Method)
	}
	if c.headers, err = parseHeaders(c.Headers); err != nil {
		return err
	}
	if err := c.validateTargets(); err != nil {
		return err
	}
	if c.Connections < 1 {
		return fieldErr("Connections", "must be at least 1 (got %d)", c.Connections)
	}
	if c.Requests < 0 {
		return fieldErr("Requests", "must be >= 0 (0 = no limit; got %d)", c.Requests)
	}
	if c.Duration <= 0 {
		return fieldErr("Duration", "must be > 0 (got %v)", c.Duration)
	}
	if c.Warmup < 0 || c.Warmup >= c.Duration {
		return fieldErr("Warmup", "%v must be >= 0 and shorter than the duration %v", c.Warmup, c.Duration)
	}
	if c.Timeout <= 0 {
		return fieldErr("Timeout", "must be > 0 (got %v)", c.Timeout)
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) {
		return fieldErr("Rate", "must be >= 0 (0 = closed loop; got %g)", c.Rate)
	}
	if c.Rate > maxRate {
		return fieldErr("Rate", "%g is above 10,000,000 requests/s; no machine this generator runs on can send that", c.Rate)
	}
	c.rampFn = nil
	if len(c.Stages) > 0 {
		if err := validateStages(c.Stages); err != nil {
			return err
		}
		if c.Rate != 0 {
			return fieldErr("Stages", "and {Rate} exclude each other: a constant rate is the one-stage case (e.g. 0s:%g,%v:%g)", c.Rate, c.Duration, c.Rate)
		}
		if d := StagesDuration(c.Stages); c.Duration != d {
			return fieldErr("Stages", "last %v, but {Duration} is %v: the stages set the run time; leave {Duration} unset", d, c.Duration)
		}
		c.rampFn = newRamp(c.Stages)
	}
	switch c.IO {
	case "", IOEpoll, IOUring, IOAuto:
	default:
		return fieldErr("IO", "%q: use epoll, uring or auto", c.IO)
	}
	if c.PacingTolerance < 0 || c.PacingTolerance > time.Second {
		return fieldErr("PacingTolerance", "must be between 0 and 1s (got %v)", c.PacingTolerance)
	}
	if c.MaxPending < 0 || c.MaxPending > maxMaxPending {
		return fieldErr("MaxPending", "must be between 0 (default) and %d (got %d): each pending request takes 8 bytes", maxMaxPending, c.MaxPending)
	}
	if len(c.CPUs) > 0 {
		if err := pin.CheckAllowed(c.CPUs); err != nil {
			return &UsageError{Field: "CPUs", Msg: err.Error()}
		}
	}
	if n := c.Connections + 64; !c.HTTP3 {
		var lim unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && uint64(n) > lim.Cur {
			return fieldErr("Connections", "%d connections need about %d open files but ulimit -n is %d: raise it (ulimit -n %d) or use fewer connections", c.Connections, n, lim.Cur, n)
		}
	}
	if c.VerifySHA256 != nil && len(c.VerifySHA256) != 32 {
		return fieldErr("VerifySHA256", "must be a SHA-256 digest (32 bytes, 64 hex digits)")
	}
	if c.NetNS != "" {
		if _, err := os.Stat(c.NetNS); err != nil {
			return fieldErr("NetNS", "%v", err)
		}
	}
	if err := c.validateStart(time.Now()); err != nil {
		return err
	}
	if err := c.validateThresholds(); err != nil {
		return err
	}
	if err := c.validateH2(); err != nil {
		return err
	}
	if err := c.validateH3(); err != nil {
		return err
	}
	return c.validateTLS()
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

// validateH3 checks the options that HTTP/3 changes or that only make sense
// with it.
func (c *Config) validateH3() error {
	t := c.TLS
	if t.ZeroRTT && !c.HTTP3 {
		return fieldErr("TLS.ZeroRTT", "works only with {HTTP3} (TCP+TLS here never sends early data)")
	}
	if t.ZeroRTT && !t.Resume {
		return fieldErr("TLS.ZeroRTT", "needs {TLS.Resume}: early data rides on a resumed TLS session")
	}
	if !c.HTTP3 {
		return nil
	}
	if c.target.Scheme != "https" {
		return fieldErr("HTTP3", "needs an https:// URL (got %s)", c.URL)
	}
	if t.Version == "1.2" {
		return fieldErr("HTTP3", "runs on TLS 1.3 only (QUIC has no TLS 1.2): drop {TLS.Version} 1.2")
	}
	if t.ClientHello != "" && t.ClientHello != "go" {
		return fieldErr("TLS.ClientHello", "%s is TCP-only: QUIC handshakes use Go's crypto/tls; drop it with {HTTP3}", t.ClientHello)
	}
	if c.Close == CloseRST {
		return fieldErr("Close", "rst is a TCP option; HTTP/3 connections end with a QUIC CONNECTION_CLOSE: drop it with {HTTP3}")
	}
	return nil
}

func (c *Config) openLoop() bool { return c.Rate > 0 || len(c.Stages) > 0 }

// peakRate is the highest rate of the run, requests/s: Rate, or the
// stages' highest (validated).
func (c *Config) peakRate() float64 {
	if c.rampFn != nil {
		return c.rampFn.peak()
	}
	return c.Rate
}

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

// shardRate is this shard's part of the peak rate (Config.Rate, or the
// stages' highest), requests/s.
func (c *Config) shardRate() float64 { return c.peakRate() / float64(c.Shard.count()) }

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
	case c.HTTP3:
		why = "HTTP/3 (quic-go runs TLS)"
	case t.Version != "1.3":
		why = "{TLS.Version} " + t.Version
	case t.ClientHello != "go" && t.ClientHello != "":
		why = "{TLS.ClientHello} " + t.ClientHello
	case t.Resume:
		why = "{TLS.Resume} (session tickets)"
	default:
		for _, n := range t.Curves {
			if n := strings.ToLower(n); n != "x25519" && n != "p256" {
				why = "{TLS.Curves} " + n + " (the lean engine has x25519 and p256)"
				break
			}
		}
	}
	lean = why == ""
	if t.Engine == "lean" && !lean {
		return false, why, fieldErr("TLS.Engine", "lean does not apply with %s: it runs TLS 1.3 handshakes with {TLS.ClientHello} go, no {TLS.Resume}, {TLS.Curves} x25519 or p256", why)
	}
	if len(t.Ciphers) > 0 && !lean {
		return false, why, fieldErr("TLS.Ciphers", "needs the lean TLS 1.3 engine, which does not apply with %s (crypto/tls does not let TLS 1.3 suites be chosen)", why)
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

// validateTargets parses the targets (or the Config's one request) into
// c.reqs, checks they share one scheme and host:port, and builds the
// weighted table.
func (c *Config) validateTargets() error {
	if len(c.Targets) == 0 {
		if len(c.TargetWeights) > 0 {
			return fieldErr("TargetWeights", "weights need {Targets}")
		}
		c.reqs = []reqSpec{{method: c.Method, url: c.URL, target: c.target, headers: c.headers, body: c.Body}}
		c.pick = nil
		return nil
	}
	if len(c.Targets) > MaxTargets {
		return fieldErr("Targets", "%d targets, more than %d", len(c.Targets), MaxTargets)
	}
	if c.URL != "" && c.URL != c.Targets[0].URL {
		return fieldErr("Targets", "{URL} %q must be the first target's (%q) or empty with targets", c.URL, c.Targets[0].URL)
	}
	if c.HTTP3 {
		return fieldErr("Targets", "work over HTTP/1.1 and HTTP/2, not yet {HTTP3}: run one generator per URL for HTTP/3")
	}
	first := c.target
	c.reqs = c.reqs[:0]
	for i, tr := range c.Targets {
		t, err := ParseTarget(tr.URL)
		if err != nil {
			return fieldErr("Targets", "target %d: %v", i+1, err)
		}
		if t.Scheme != first.Scheme || !strings.EqualFold(t.Host, first.Host) || t.Port != first.Port {
			return fieldErr("Targets", "target %d (%s) is not on %s://%s: every target of a run shares one scheme and host:port (one connection pool); give other names with a Host header, or run one generator per origin",
				i+1, tr.URL, first.Scheme, hostPort(first))
		}
		if tr.Method == "" || strings.ContainsAny(tr.Method, " \r\n\t") {
			return fieldErr("Targets", "target %d: bad method %q", i+1, tr.Method)
		}
		own, err := parseHeaders(tr.Headers)
		if err != nil {
			return fieldErr("Targets", "target %d: %v", i+1, err)
		}
		hs := make([]Header, 0, len(c.headers)+len(own))
		for _, h := range c.headers {
			if !hasHeader(own, h.Name) {
				hs = append(hs, h)
			}
		}
		hs = append(hs, own...)
		body := tr.Body
		if body == nil {
			body = c.Body
		}
		c.reqs = append(c.reqs, reqSpec{method: tr.Method, url: tr.URL, target: t, headers: hs, body: body})
	}
	c.pick = nil
	if len(c.TargetWeights) > 0 {
		if len(c.TargetWeights) != len(c.Targets) {
			return fieldErr("TargetWeights", "%d weights for %d targets: give one per target, in file order", len(c.TargetWeights), len(c.Targets))
		}
		tab, err := weightTable(c.TargetWeights)
		if err != nil {
			return err
		}
		c.pick = tab
	}
	return nil
}

// targetOf returns the target of global request j.
func (c *Config) targetOf(j int64) int32 {
	switch {
	case len(c.reqs) <= 1:
		return 0
	case c.pick != nil:
		return c.pick[j%int64(len(c.pick))]
	}
	return int32(j % int64(len(c.reqs)))
}

// validateThresholds refuses a threshold the run cannot judge: a share of
// the offered rate needs one (Rate or Stages).
func (c *Config) validateThresholds() error {
	for _, t := range c.Thresholds {
		if t.needsOffered() && !c.openLoop() {
			return fieldErr("Thresholds", "%s compares with the offered rate, and a closed-loop run has none: give {Rate} (or {Stages}), or a rate in requests/s such as rate>=5000", t)
		}
		if negate(t.Op) == "" {
			return fieldErr("Thresholds", "%s: unknown operator %q: use <, <=, > or >=", t, t.Op)
		}
	}
	return nil
}

// offeredBy returns the requests the whole run's schedule offers from the
// start to t seconds: N(t) of the stages, or Rate x t, never beyond the
// run's end.
func (c *Config) offeredBy(t float64) float64 {
	t = min(max(t, 0), c.Duration.Seconds())
	if c.rampFn != nil {
		return c.rampFn.count(t)
	}
	return c.Rate * t
}
