package gen

import (
	"crypto/tls"
	"math"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/gen/tls13"
	"github.com/loadlab/loadlab/pin"
)

// Prepared is a run's Config checked and parsed once (Config.Prepare):
// the URL, the headers and the source addresses parsed, the requests (one,
// or one per target) and the weighted target table built, the rate model
// made, the defaults filled. Nothing changes it afterwards: Run and the
// CLI use the same value, and the engines read the parsed parts, never
// the text again. A Prepared may be run more than once, one run at a time.
type Prepared struct {
	spec       *run.Spec
	thresholds []result.Threshold
}

// Prepare checks every field of c as given (a zero Duration or Timeout is
// an error here; Run applies Defaults first) before any work starts, parses
// what the engines read, and then fills the fields left for Defaults
// (Streams, the TLS curves and engine). Errors are UsageErrors with one
// line that says what is wrong and what to do.
func (c Config) Prepare() (*Prepared, error) {
	p := &prepared{Config: c}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.Config.Defaults()
	return &Prepared{spec: p.spec(), thresholds: p.Thresholds}, nil
}

// Validate checks c as Prepare does, and keeps nothing of it.
func (c *Config) Validate() error {
	_, err := c.Prepare()
	return err
}

// prepared is a Config as Prepare checks it, with the parts it parsed.
type prepared struct {
	Config
	target   Target
	headers  []run.Header
	reqs     []run.Req
	pick     []int32
	pacer    *run.Pacer   // the offered rate: Rate or Stages (nil: closed loop)
	srcAddrs []netip.Addr // SrcAddrs, parsed
}

// defaultIO is what an unset Config.IO means: DefaultIO, except in the
// package's tests, which run under each path (LOADLAB_TEST_IO, TestMain).
var defaultIO = DefaultIO

// spec is the run.Spec of p, checked and defaulted: what runs.
func (p *prepared) spec() *run.Spec {
	c := &p.Config
	s := &run.Spec{
		Reqs: p.reqs, Pick: p.pick, Target: p.target,
		Pacer: p.pacer, Rate: c.Rate, Stages: stagesInfo(c.Stages),
		Connections: c.Connections, Requests: c.Requests,
		Duration: c.Duration, Warmup: c.Warmup, Timeout: c.Timeout,
		CPUs: c.CPUs, MaxPending: c.MaxPending, PacingTolerance: c.PacingTolerance,
		IO: c.IO, IODefault: defaultIO,
		NewConn: c.NewConn, CloseRST: c.Close == CloseRST, SrcAddrs: p.srcAddrs,
		TLS:   p.tlsSpec(),
		HTTP2: c.HTTP2, HTTP3: c.HTTP3, Streams: c.Streams,
		VerifySHA256: c.VerifySHA256, NetNS: c.NetNS, AllowRemote: c.AllowRemote, WakeProbe: c.WakeProbe,
		Shard: c.Shard.Index, Shards: c.Shard.count(),
		StartAt: c.StartAt, StartTolerance: c.startTolerance(),
		Machine:    c.Host,
		UringFault: c.uringFault,
		ReadHook:   c.readHook,
	}
	if p.pick != nil {
		s.Weights = c.TargetWeights
	}
	return s
}

// tlsSpec is the run's TLS, parsed (the Config checked and defaulted).
func (p *prepared) tlsSpec() run.TLS {
	o := p.TLS
	t := run.TLS{Version: tls.VersionTLS13, Insecure: o.Insecure, CAFile: o.CAFile, SNI: o.SNI, Hello: o.ClientHello,
		Resume: o.Resume, ZeroRTT: o.ZeroRTT, FreshKeyShare: o.FreshKeyShare, ALPN: p.alpn()}
	if o.Version == "1.2" {
		t.Version = tls.VersionTLS12
	}
	for _, n := range o.Curves {
		t.Curves = append(t.Curves, strings.ToLower(n))
	}
	for _, n := range o.Ciphers {
		s := tls13.SuiteByName(strings.ToLower(n))
		if s == nil {
			s = tls13.SuiteByName(n)
		}
		t.Suites = append(t.Suites, s.ID)
	}
	t.Lean, t.LeanWhy, _ = p.leanTLS() // checked by validate
	return t
}

// validate checks every field of c.Config as given and parses what the
// engines read: the URL, the headers, the requests and the pacer.
func (c *prepared) validate() error {
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
	if c.srcAddrs, err = parseSrcAddrs(c.SrcAddrs, t); err != nil {
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
	c.pacer = nil
	if c.Rate > 0 {
		c.pacer = run.Constant(c.Rate, c.Duration) // the one-stage case
	}
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
		c.pacer = newPacer(c.Stages)
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

// validateH3 checks the options that HTTP/3 changes or that only make sense
// with it.
func (c *prepared) validateH3() error {
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

// validateTargets parses the targets (or the Config's one request) into
// c.reqs, checks they share one scheme and host:port, and builds the
// weighted table.
func (c *prepared) validateTargets() error {
	if len(c.Targets) == 0 {
		if len(c.TargetWeights) > 0 {
			return fieldErr("TargetWeights", "weights need {Targets}")
		}
		c.reqs = []run.Req{{Method: c.Method, Target: c.target, Headers: c.headers, Body: c.Body}}
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
				i+1, tr.URL, first.Scheme, first.HostPort())
		}
		if tr.Method == "" || strings.ContainsAny(tr.Method, " \r\n\t") {
			return fieldErr("Targets", "target %d: bad method %q", i+1, tr.Method)
		}
		own, err := parseHeaders(tr.Headers)
		if err != nil {
			return fieldErr("Targets", "target %d: %v", i+1, err)
		}
		hs := make([]run.Header, 0, len(c.headers)+len(own))
		for _, h := range c.headers {
			if !run.HasHeader(own, h.Name) {
				hs = append(hs, h)
			}
		}
		hs = append(hs, own...)
		body := tr.Body
		if body == nil {
			body = c.Body
		}
		c.reqs = append(c.reqs, run.Req{Method: tr.Method, Target: t, Headers: hs, Body: body})
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
