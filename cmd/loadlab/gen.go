package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/gen/metrics"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/pin"
)

type genFlags struct {
	cfg       gen.Config
	cpus      string
	bodyFile  string
	jsonOut   string
	hdrLog    string
	quiet     bool
	srcAddrs  string
	closeMode string
	verify    string
	cpuProf   string
	shard     string
	startAt   string
	threshold []string
	headerEnv []string
	stages    string
	targets   string
	weights   string
	metrics   metricsFlags
}

// newGenCmd builds `loadlab gen` with fresh flags; their defaults are gen's.
func newGenCmd() *cobra.Command {
	f := &genFlags{}
	cmd := &cobra.Command{
		Use:   "gen [flags] URL  |  gen --targets FILE [flags]",
		Short: "Generate HTTP load and measure latency from each request's intended send time",
		Long: `gen drives HTTP/1.1 (or HTTP/2, HTTP/3) load from one event loop per pinned CPU.

Closed loop (--rate 0, the default): each connection sends its next request
when the previous one completes, like wrk. Open loop (--rate R): requests are
due at start + i/R; a request whose connection is busy waits, and its latency
counts from when it was due (coordinated-omission correction, like wrk2).

TLS: https:// URLs keep connections alive unless --new-conn. Key exchange is
pinned to X25519 by default (--curves) so results compare across Go versions:
Go 1.26 would otherwise offer X25519MLKEM768 first, a larger and slower
handshake. --client-hello chrome|firefox sends a uTLS preset instead, with the
preset's own groups.

TLS 1.3 handshakes run on loadlab's lean TLS implementation (--tls-engine auto): one
ClientHello serialized per run, one key pair per loop reused across
handshakes (--fresh-key-share for a new one each time), the chain verified
once per distinct certificate and the server's signature on every handshake
(--insecure: neither). The server's work per handshake is unchanged.
crypto/tls (or uTLS) runs TLS 1.2, --client-hello presets, --resume and
--curves other than x25519/p256; --tls-engine std forces it, to compare.

HTTP/3 (--http3): QUIC v1 on loadlab's lean QUIC client (--tls-engine auto or
lean) on the same pinned loops: one UDP socket per loop shared by its
connections (told apart by connection ID), datagrams sent with sendmmsg and read
with recvmmsg, one request at a time per connection, kept alive or a new
connection each (--new-conn); nothing is allocated per keep-alive request.
quic-go's client runs it with --tls-engine std, and where the lean client does
not apply: a request body, --resume, --0rtt, --targets, a request line and
headers over 900 bytes (the result's notes say why).

HTTP/2 (--h2): ALPN h2 over TLS for https://, h2c with prior knowledge for
http://; each connection carries up to --streams requests at once (default
10, as h2load -m; the server's SETTINGS_MAX_CONCURRENT_STREAMS may lower it).
A stream reset is errors.stream_reset; requests the server refused unprocessed
(REFUSED_STREAM, above a GOAWAY's last stream) are sent again with their
intended time (h2.refused); GOAWAY reconnects (h2.goaways). A server that
makes the generator queue over 10,000 control frames unread (a PING flood)
gets GOAWAY ENHANCE_YOUR_CALM: its requests are errors.h2.calm.

Every request due in the measured window ends in one outcome: a response, or
an error class (still unanswered when the drain ends one --timeout after the
stop: timeout; evicted from the full pending queue: dropped). latency_us counts
failures at the time they were given up; latency_2xx_us is 2xx only.

Every result says whether the generator itself was the bottleneck: when a loop
was busy + starved (runnable but not running: another task, a softirq or the
hypervisor had its CPU) above 90% of its wall time (busy, starved and idle add
up to 100%), or, in open loop, when the send lag beyond --pacing-tolerance at
p50, p95 or p99 is above 1 ms and above 10% of the corrected latency at the
same quantile. Such lag only at p99.9 is a caveat on that quantile.

Stages (--stages 30s:1000,60s:5000,30s:0): the open-loop rate ramps
linearly to each stage's rate over its length, the first from 0; request j
is due where the rate's integral reaches j. Targets (--targets FILE,
vegeta's format): several requests to one scheme and host:port, round-robin
or by --targets-weight; the result counts each (targets). Thresholds
(--threshold 'p99<50ms', 'errors<1%', 'rate>=97%') are checked at the end:
exit status 3 when one fails.

Shards (--shard i/N): several generators run one schedule, each taking
request j when j mod N = i, and a share of --connections and --requests (the
whole run's; the first shards take the remainder). Give them one
--start-at time; merge their JSON results with loadlab merge.`,
		Example: `  loadlab gen -c 50 -d 10s http://127.0.0.1:8080/1k
  loadlab gen --rate 5000 -d 30s --warmup 6s --json out.json https://localhost:8443/1k --ca ca.pem
  loadlab gen --new-conn --src-addrs auto --close rst https://127.0.0.1:8443/1k --insecure
  loadlab gen --h2 -c 10 --streams 10 -r 20000 http://127.0.0.1:8080/1k
  loadlab gen --stages 30s:1000,60s:5000,30s:0 --threshold 'p99<50ms' --threshold 'rate>=97%' http://127.0.0.1:8080/1k
  loadlab gen --targets targets.txt --targets-weight 5,1,1 -r 2000 -d 30s`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.targets != "" {
				if len(args) != 0 {
					return usagef("gen --targets takes its URLs from the file: drop the URL argument (got %d)", len(args))
				}
				return nil
			}
			if len(args) != 1 {
				return usagef("gen takes exactly one URL (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			url := ""
			if len(args) == 1 {
				url = args[0]
			}
			return runGen(cmd, f, url)
		},
	}
	c := &f.cfg
	fl := cmd.Flags()
	fl.IntVarP(&c.Connections, "connections", "c", gen.DefaultConnections, "connections, spread over the loops")
	fl.DurationVarP(&c.Duration, "duration", "d", gen.DefaultDuration, "total run time, warmup included")
	fl.Float64VarP(&c.Rate, "rate", "r", 0, "requests/s over all loops; 0 = closed loop")
	fl.IntVarP(&c.Requests, "requests", "n", 0, "stop after this many requests (0 = no limit; --duration still bounds the run)")
	fl.StringVar(&f.cpus, "cpus", "", "CPUs to run one event loop each on, e.g. 1 or 2-5 (default: every CPU this process may use)")
	fl.DurationVar(&c.Warmup, "warmup", 0, "leading part of the run left out of the results")
	fl.DurationVar(&c.Timeout, "timeout", gen.DefaultTimeout, "per-request timeout, from when work on the request begins (connect, handshake, write)")
	fl.StringArrayVarP(&c.Headers, "header", "H", nil, "extra request header \"Name: value\" (repeatable)")
	fl.StringArrayVar(&f.headerEnv, "headers-env", nil, "extra request headers from the environment variable VAR, one \"Name: value\" per line (repeatable): values that stay out of the command line (the Kubernetes Job's --header-secret sets it from a Secret)")
	fl.StringVarP(&c.Method, "method", "m", gen.DefaultMethod, "request method")
	fl.StringVar(&f.bodyFile, "body-file", "", "send this file as the request body")
	fl.StringVar(&f.jsonOut, "json", "", "write the result as JSON to FILE (- = stdout)")
	fl.StringVar(&f.hdrLog, "hdr-log", "", "write an HdrHistogram interval log (one interval per second, µs) to FILE (put in place at the end of the run; - for stdout)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no human-readable output")
	fl.IntVar(&c.MaxPending, "max-pending", 0, "open loop: due-but-unsent requests kept; when full the longest-waiting one is dropped (default rate x timeout, at least 1000)")
	fl.StringVar(&c.IO, "io", gen.DefaultIO, "how the HTTP/1.1 and HTTP/2 loops drive their sockets: epoll (a system call per read and write), uring (io_uring: one io_uring_enter per wakeup; fails where the kernel lacks what it needs) or auto (io_uring for HTTP/1.1 closed loops and paced open loops where it works; epoll for HTTP/2, for an open loop at --pacing-tolerance 0, where it costs less, and as the fallback). The result says which ran in generator.io and why in generator.io_note")
	fl.DurationVar(&c.PacingTolerance, "pacing-tolerance", gen.DefaultPacingTolerance, "open loop: a request may go out up to this long after its intended time, so that requests due close together leave in one wakeup (wakeups at multiples of it; never early). The default 0 sends each at its own time and adds nothing to the latency you measure; 1ms makes an open loop cost about what a closed loop does (wrk2 and h2load pace at millisecond ticks). The lateness counts in the corrected latency; the self-check judges only lag beyond it")
	fl.BoolVar(&c.NewConn, "new-conn", false, "open a new connection (full TLS handshake) for every request")
	fl.StringVar(&f.closeMode, "close", "fin", "how the generator closes: fin, or rst (SO_LINGER 0: no TIME_WAIT here, but the server sees a reset)")
	fl.StringVar(&f.srcAddrs, "src-addrs", "", "bind new connections round-robin to these local addresses (list, range a-b, or auto = 127.0.0.2-127.0.0.250 for loopback targets); each brings its own ephemeral ports")
	fl.StringVar(&c.TLS.Version, "tls", gen.DefaultTLSVersion, "TLS version: 1.2 or 1.3")
	fl.StringSliceVar(&c.TLS.Curves, "curves", nil, "key-exchange groups: x25519, p256, p384, p521, x25519mlkem768 (default x25519; with --tls 1.2 x25519,p256, since ECDSA P-256 certificates need p256 offered). Go 1.26 would otherwise offer X25519MLKEM768 first")
	fl.BoolVar(&c.TLS.Insecure, "insecure", false, "do not verify the server: no certificate chain check and no check of its CertificateVerify signature (the server still signs every handshake; its Finished is still checked)")
	fl.StringVar(&c.TLS.CAFile, "ca", "", "PEM file with the CA to verify the server with")
	fl.StringVar(&c.TLS.SNI, "sni", "", "TLS server name (default: the URL host)")
	fl.StringVar(&c.TLS.ClientHello, "client-hello", gen.DefaultClientHello, "ClientHello: go, or a uTLS preset: chrome, firefox (a preset brings its own TLS versions and groups: --tls and --curves do not apply)")
	fl.BoolVar(&c.TLS.Resume, "resume", false, "allow TLS session resumption on new connections (default: full handshakes)")
	fl.StringVar(&c.TLS.Engine, "tls-engine", "auto", "TLS handshakes (and with --http3 the QUIC client): auto (lean where it applies: TLS 1.3, --client-hello go, no --resume, x25519/p256), lean, or std (crypto/tls and uTLS; quic-go for HTTP/3)")
	fl.BoolVar(&c.TLS.FreshKeyShare, "fresh-key-share", false, "lean TLS implementation: a new ECDHE key pair for every handshake (default: one per loop, reused; result tls.client_key_share)")
	fl.StringSliceVar(&c.TLS.Ciphers, "ciphers", nil, "lean TLS implementation: TLS 1.3 cipher suites to offer, in order: aes128gcm, aes256gcm, chacha20 (default all three, AES first on CPUs with AES instructions)")
	fl.BoolVar(&c.TLS.ZeroRTT, "0rtt", false, "HTTP/3: send requests as 0-RTT early data on resumed connections (needs --resume)")
	fl.BoolVar(&c.WakeProbe, "wake-probe", false, "measure how late this machine wakes a sleeping thread during the run (1 ms sleeps beside each loop on its CPU, about 0.5% of a core): the result's wake_floor, during: true")
	fl.BoolVar(&c.AllowRemote, "allow-remote", false, "allow a target off this machine (through a gateway, a physical link, or a bridge with a port that is not a veth into this host's namespaces); by default only loopback, this host's addresses and its network namespaces are loaded. Targets only: a --metrics-addr off loopback needs --metrics-allow-remote")
	fl.BoolVar(&c.HTTP3, "http3", false, "HTTP/3 over QUIC (https:// URLs)")
	fl.BoolVar(&c.HTTP2, "h2", false, "HTTP/2: over TLS with ALPN h2 for https:// URLs, h2c with prior knowledge for http://")
	fl.IntVar(&c.Streams, "streams", 0, fmt.Sprintf("HTTP/2: concurrent streams per connection, like h2load -m (default %d; 1 with --new-conn); the server's SETTINGS_MAX_CONCURRENT_STREAMS may lower it", gen.DefaultStreams))
	fl.StringVar(&f.verify, "verify-sha256", "", "check every response body against this SHA-256 (hex); mismatches count as errors.body_mismatch. Costs CPU: hashing 1 MiB takes about 0.5 ms")
	fl.StringVar(&f.shard, "shard", "", "run shard INDEX/COUNT of the schedule (0-based): request j when j mod COUNT = INDEX, and this shard's share of -c and -n")
	fl.StringVar(&f.startAt, "start-at", "", "start the schedule at this wall-clock time: RFC 3339 (2026-05-01T12:00:00.250Z) or +DURATION from now; the run prepares first and fails if it is ready later than --start-tolerance")
	fl.DurationVar(&c.StartTolerance, "start-tolerance", gen.DefaultStartTolerance, "how late a --start-at run may be ready before it fails instead of running out of step")
	fl.StringVar(&c.Host, "host", "", "name recorded as the result's host (default: the hostname)")
	fl.StringVar(&f.stages, "stages", "", "ramp the rate linearly over stages DURATION:RATE,... (k6's stages), the first from 0, e.g. 30s:1000,60s:5000,30s:0 (0s:R jumps to R); replaces --rate and --duration")
	fl.StringVar(&f.targets, "targets", "", "send the requests of this file (vegeta's format: METHOD URL, header lines, optional @body-file, blank lines between targets) round-robin; every target shares one scheme and host:port, -H headers go with every target, --body-file with those without @file")
	fl.StringVar(&f.weights, "targets-weight", "", "with --targets: one whole-number weight per target in file order, e.g. 5,1,1 (requests in those proportions, spread out)")
	fl.StringArrayVar(&f.threshold, "threshold", nil, "check the result at the end, e.g. 'p99<50ms', 'errors<1%', 'rate>=97%' (repeatable): METRIC (p50 p90 p95 p99 p99.9 max mean: corrected latency; errors: failed or non-2xx, share or count; rate: 2xx/s, share of the offered rate or req/s) OP (< <= > >=) VALUE. The result records each; the exit status is 3 when one fails")
	f.metrics.register(fl, "the run")
	fl.StringVar(&f.cpuProf, "cpuprofile", "", "write a Go CPU profile of the generator to FILE (for tuning loadlab itself)")
	fl.MarkHidden("cpuprofile")
	return cmd
}

// headersFromEnv reads the "Name: value" lines of environment variable
// name (--headers-env). Its errors never quote a value: it may be a secret.
func headersFromEnv(name string) ([]string, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return nil, usagef("--headers-env %s: the variable is not set", name)
	}
	var hs []string
	for i, line := range strings.Split(v, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if n, _, ok := strings.Cut(line, ":"); !ok || strings.TrimSpace(n) == "" {
			return nil, usagef("--headers-env %s: line %d is not a header \"Name: value\"", name, i+1)
		}
		hs = append(hs, line)
	}
	if len(hs) == 0 {
		return nil, usagef("--headers-env %s: no header in it", name)
	}
	return hs, nil
}

func runGen(cmd *cobra.Command, f *genFlags, url string) error {
	c := f.cfg
	c.URL = url
	for _, name := range f.headerEnv {
		hs, err := headersFromEnv(name)
		if err != nil {
			return err
		}
		c.Headers = append(slices.Clip(c.Headers), hs...)
	}
	if f.cpus != "" {
		set, err := pin.ParseList(f.cpus)
		if err != nil {
			return usagef("--cpus: %v", err)
		}
		c.CPUs = set
	}
	if f.bodyFile != "" {
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			return usagef("cannot read --body-file: %v", err)
		}
		c.Body = b
	}
	switch f.closeMode {
	case "fin":
		c.Close = gen.CloseFIN
	case "rst":
		c.Close = gen.CloseRST
	default:
		return usagef("bad --close %q: use fin or rst", f.closeMode)
	}
	if f.verify != "" {
		d, err := hex.DecodeString(strings.TrimSpace(f.verify))
		if err != nil || len(d) != 32 {
			return usagef("bad --verify-sha256: give the 64 hex digits of a SHA-256 digest")
		}
		c.VerifySHA256 = d
	}
	if f.shard != "" {
		sh, err := gen.ParseShard(f.shard)
		if err != nil {
			return usageError{err}
		}
		c.Shard = sh
	}
	if f.startAt != "" {
		at, err := gen.ParseStartAt(f.startAt, time.Now())
		if err != nil {
			return usageError{err}
		}
		c.StartAt = at
	}
	if f.stages != "" {
		if cmd.Flags().Changed("duration") || cmd.Flags().Changed("rate") {
			return usagef("--stages sets the rate and the run time: drop --duration and --rate (a constant rate is --rate R -d D, or one stage 0s:R,D:R)")
		}
		st, err := gen.ParseStages(f.stages)
		if err != nil {
			return usageError{err}
		}
		c.Stages, c.Duration = st, gen.StagesDuration(st)
	}
	if f.weights != "" && f.targets == "" {
		return usagef("--targets-weight needs --targets")
	}
	if f.targets != "" {
		if cmd.Flags().Changed("method") {
			return usagef("--method does not apply with --targets: each target names its own")
		}
		ts, err := readTargets(f.targets)
		if err != nil {
			return err
		}
		c.Targets, c.URL = ts, ts[0].URL
		if f.weights != "" {
			if c.TargetWeights, err = gen.ParseTargetWeights(f.weights); err != nil {
				return usageError{err}
			}
		}
	}
	if len(f.threshold) > 0 {
		ts, err := result.ParseThresholds(f.threshold)
		if err != nil {
			return usageError{err}
		}
		c.Thresholds = ts
	}
	if cmd.Flags().Changed("streams") && c.Streams == 0 {
		return usagef("--streams must be at least 1 (got 0)")
	}
	// The flags carry the defaults already: Prepare checks them as given
	// (an explicit -d 0, --timeout 0 or -c 0 is an error, not the
	// default) and parses the URL, the headers and the targets once, for
	// this check and for the run.
	p, err := c.Prepare()
	if err != nil {
		return usageError{err}
	}
	if f.srcAddrs != "" {
		if p.SrcAddrs, err = gen.ParseSrcAddrs(f.srcAddrs, p.Target()); err != nil {
			return usageError{err}
		}
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	jsonW, closeJSON, err := openOut(f.jsonOut, stdout)
	if err != nil {
		return usagef("--json: %v", err)
	}
	defer closeJSON() //nolint:errcheck // early-return cleanup: the success path closes it and reports its error
	closeHdr := func() error { return nil }
	if f.hdrLog != "" {
		hw, closeH, err := openOut(f.hdrLog, stdout)
		if err != nil {
			return usagef("--hdr-log: %v", err)
		}
		defer closeH() //nolint:errcheck // early-return cleanup: the success path closes it and reports its error
		p.HdrLog, closeHdr = hw, closeH
	}
	if !f.quiet && isTerminal(stderr) {
		p.Progress = func(s gen.Second) {
			fmt.Fprintf(stderr, "\r\033[K%5.1fs  %8d ok/s  %6d non-2xx  %6d errors  p99 so far %s", s.Elapsed, s.OK, s.Non2xx, s.Errors, units.Micros(s.P99SoFarUs))
		}
	}
	var gm *metrics.Gen
	if f.metrics.addr != "" {
		labels, err := f.metrics.labelSet(time.Now())
		if err != nil {
			return err
		}
		if p.Shard.Count > 1 {
			labels["shard"] = strconv.Itoa(p.Shard.Index)
		}
		gm = metrics.NewGen(labels)
		p.Live = gm.Observe
	}
	ep, err := f.metrics.start(stderr, gm)
	if err != nil {
		return err
	}
	if f.cpuProf != "" {
		fh, err := os.Create(f.cpuProf)
		if err != nil {
			return usagef("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(fh); err != nil {
			fh.Close()
			return usagef("--cpuprofile: %v", err)
		}
		defer func() { pprof.StopCPUProfile(); fh.Close() }()
	}
	ctx, sig, stopSignals := signalContext(context.Background())
	defer stopSignals()
	res, err := p.Run(ctx)
	if p.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	defer func() { ep.stop(ctx.Err() != nil) }()
	runErr := err // with a result: the run broke down midway; its partial result is still written
	if err != nil && res == nil {
		if gen.IsUsage(err) {
			return usageError{err}
		}
		if ctx.Err() != nil { // a signal before the start time
			return exitError{code: sig.exitCode(), err: err}
		}
		return err
	}
	res.Words(flagOf)
	hintUnknownCA(res)
	if jsonW != nil {
		if err := writeJSON(jsonW, closeJSON, res); err != nil {
			return err
		}
	}
	if !f.quiet {
		out := stdout
		if f.jsonOut == "-" {
			out = stderr
		}
		res.WriteText(out)
	}
	if err := closeHdr(); err != nil {
		return fmt.Errorf("write --hdr-log: %v", err)
	}
	if runErr != nil {
		return runErr
	}
	if res.Interrupted {
		return exitError{code: sig.exitCode()}
	}
	return thresholdExit(res)
}

// thresholdExit is exit status 3 with the failed thresholds named, when
// one of res's failed (gen --threshold, merge --threshold).
func thresholdExit(res *result.Result) error {
	if !res.ThresholdsFailed() {
		return nil
	}
	var failed []string
	for _, t := range res.Thresholds {
		if !t.Pass {
			failed = append(failed, t.Threshold+" ("+t.Reason+")")
		}
	}
	return exitError{code: exitThreshold, err: fmt.Errorf("threshold failed: %s", strings.Join(failed, "; "))}
}

// isTerminal reports whether w is a terminal (the live progress line).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// caughtSignal remembers which signal ended a run.
type caughtSignal struct{ sig chan os.Signal }

// exitCode is 128+signal: 130 for SIGINT, 143 for SIGTERM.
func (c caughtSignal) exitCode() int {
	select {
	case s := <-c.sig:
		c.sig <- s
		if s == syscall.SIGTERM {
			return 143
		}
	default:
	}
	return 130
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// and a stop function that ends the signal handling (call it when the run is
// over; a second signal then gets the default action).
func signalContext(parent context.Context) (context.Context, caughtSignal, func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	got := caughtSignal{sig: make(chan os.Signal, 1)}
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		defer signal.Stop(ch)
		select {
		case s := <-ch:
			got.sig <- s
			cancel()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, got, func() { once.Do(func() { close(done); cancel() }) }
}

// readTargets reads a --targets file; @body paths are read as given
// (relative to the working directory, as vegeta does).
func readTargets(path string) ([]gen.Request, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, usagef("cannot read --targets: %v", err)
	}
	defer fh.Close()
	ts, err := gen.ParseTargets(fh, os.ReadFile)
	if err != nil {
		return nil, usageError{err}
	}
	return ts, nil
}

// caHint says what to do about a server certificate signed by a CA the
// run does not trust.
const caHint = "pass --ca FILE (the CA that signed the server's certificate), or --insecure"

// hintUnknownCA adds caHint to the tls error sample of a run whose
// handshakes failed on an unknown certificate authority.
func hintUnknownCA(res *result.Result) {
	s, ok := res.ErrorSamples["tls"]
	if ok && strings.Contains(s, "certificate signed by unknown authority") && !strings.Contains(s, caHint) {
		res.ErrorSamples["tls"] = s + ": " + caHint
	}
}
