package h3std

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/internal/fields"
	"github.com/loadlab/loadlab/pin"
)

// The HTTP/3 engine.
//
// quic-go owns its UDP sockets' reads and runs every QUIC connection on
// goroutines of its own, so HTTP/3 cannot ride the TCP loops of the
// HTTP/1.1 engine. It has the same shape and the same outputs instead:
// one loop per CPU owns a recorder, the open-loop schedule (start + i/R,
// loops interleaved), the bounded pending queue and the per-second
// reports; each of the loop's connections is a QUIC connection on its own
// UDP socket, driven by a worker goroutine that runs one request at a time
// and records it into its loop's recorder under the loop's mutex.
//
// Keeping Go's scheduler on Config.CPUs: RestrictProcess sets the affinity
// of every existing thread of the process to the CPU set, and a thread
// inherits its affinity from the thread that creates it, so the threads the
// runtime starts later (for quic-go's goroutines, the workers, timers) stay
// on the set too. The runtime creates threads needed by a locked (pinned)
// goroutine through its template thread, which was itself restricted, so a
// loop's single-CPU pin does not leak into new threads. GOMAXPROCS is set
// to the number of CPUs for the run, so Go never runs more threads at once
// than there are CPUs to run them. Each loop goroutine is locked to its own
// thread pinned to one CPU.
//
// A loop never sleeps in a blocking system call: a thread blocked in one
// keeps its P (one of the GOMAXPROCS slots) until sysmon takes it back,
// which can take up to 10 ms, and with one loop per CPU the loops would
// hold every P while they wait. A loop sleeps on a timerfd read through
// Go's netpoller instead: the goroutine parks and hands its P to the
// workers, and the timerfd fires at the intended time with microsecond
// precision (Go's own timers round sleeps up to whole milliseconds when the
// process is idle, which would show up as send lag at low rates).
//
// Affinity and GOMAXPROCS are restored when the run ends.

// engine is the state of one HTTP/3 run, shared by its loops.
type engine struct {
	r        *run.Run
	dst      *net.UDPAddr
	tlsConf  *tls.Config
	quicConf *quic.Config
	h3t      *http3.Transport // only wraps our own QUIC connections
	req      *http.Request    // shared by the run's workers, read only
	body     []byte           // request body (nil: requests are headers only)
	cpus     pin.CPUSet       // every CPU of the run (the process is restricted to them)

	versionOnce sync.Once
	version     string

	// The process's threads per CPU over the measured window; loop 0
	// begins and ends it.
	acct *run.ProcessAccount

	bufNote string // UDP buffer remark for generator.notes
}

// New builds the TLS and QUIC configurations and the request, and checks
// with one QUIC handshake that something answers.
func New(r *run.Run) (run.Engine, error) {
	cfg := r.Spec
	e := &engine{
		r:   r,
		dst: net.UDPAddrFromAddrPort(r.Dst),
		quicConf: &quic.Config{
			Versions:             []quic.Version{quic.Version1},
			HandshakeIdleTimeout: cfg.Timeout,
			KeepAlivePeriod:      10 * time.Second, // keep idle connections of a slow open loop alive
			MaxIncomingStreams:   -1,               // servers may not open request streams
		},
		// Responses are read as sent: no Accept-Encoding, no decompression
		// (like the HTTP/1.1 engine).
		h3t:  &http3.Transport{DisableCompression: true},
		body: cfg.Reqs[0].Body,
	}
	e.tlsConf = r.TLS.Std.Clone() // gen refused uTLS presets with HTTP/3: std is set
	e.tlsConf.NextProtos = []string{http3.NextProtoH3}
	req, err := e.newRequest()
	if err != nil {
		return nil, err
	}
	e.req = req
	if err := e.probe(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *engine) Protocol() string { return "h3" }

// Claim restricts the whole process to the run's CPUs (see the comment at
// the top of this file) and sets GOMAXPROCS to their number; release
// restores both.
func (e *engine) Claim(cpus pin.CPUSet, _ int) (func(), error) {
	before, err := pin.Allowed()
	if err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	if err := pin.RestrictProcess(cpus); err != nil {
		return nil, fmt.Errorf("restrict the generator to CPUs %s: %w", cpus, err)
	}
	e.cpus = cpus
	// With one CPU every thread's time is that CPU's: the first and last
	// samples give it all, and the sampler's /proc reads every 50 ms
	// (about 3% of a 1-CPU keep-alive run's CPU) are saved.
	every := 50 * time.Millisecond
	if len(cpus) == 1 {
		every = 0
	}
	e.acct = run.NewProcessAccount(cpus, every)
	procs := runtime.GOMAXPROCS(len(cpus))
	return func() {
		runtime.GOMAXPROCS(procs)
		pin.RestoreProcess(before) //nolint:errcheck // best effort: the kernel may refuse CPUs a cpuset has since removed
	}, nil
}

// Closes: quic-go's UDP sockets leave no TIME_WAIT.
func (e *engine) Closes() int64 { return 0 }

// Stats gives the account of each CPU of the run (see run.ProcessAccount).
func (e *engine) Stats(st *run.Stats) {
	st.QUICVersion = e.version
	st.PerCPU = true
	st.Shares = e.acct.Shares()
	st.Gen.CPUs = e.cpus
	st.Gen.IO, st.Gen.IONote = "udp", "HTTP/3: quic-go's UDP sockets ({IO} chooses for the HTTP/1.1 and HTTP/2 loops)"
	st.Gen.Notes = append(st.Gen.Notes, "h3: busy and starved are per CPU of the run, from every thread of the process that ran there (quic-go's goroutines move between the run's CPUs)")
	if e.bufNote != "" {
		st.Gen.Notes = append(st.Gen.Notes, e.bufNote)
	}
}

// probe makes one QUIC handshake so that a run against nothing fails at
// once with a clear message (see Run.ProbeQUIC).
func (e *engine) probe() error {
	return e.r.InNetns(func() error {
		if e.bufNote == "" {
			e.bufNote = run.UDPBufferNote("quic-go")
		}
		udp, err := run.ListenUDP(e.dst, nil)
		if err != nil {
			return err
		}
		defer udp.Close()
		return e.r.ProbeQUIC(udp, e.tlsConf, e.quicConf)
	})
}

// newRequest builds the request every worker of the run reuses.
func (e *engine) newRequest() (*http.Request, error) {
	rq := &e.r.Spec.Reqs[0] // HTTP/3 runs have one target
	req, err := http.NewRequest(rq.Method, rq.Target.URL, nil)
	if err != nil {
		return nil, fields.Usagef("bad request: %v", err)
	}
	for _, h := range rq.Headers {
		switch {
		case strings.EqualFold(h.Name, "host"):
			req.Host = h.Value
			continue
		case strings.EqualFold(h.Name, "content-length"):
			continue // HTTP/3 sets it from the body
		}
		req.Header.Add(h.Name, h.Value)
	}
	if !run.HasHeader(rq.Headers, "user-agent") {
		req.Header.Set("User-Agent", "loadlab")
	}
	return req, nil
}

// noteVersion remembers the QUIC version of the first connection.
func (e *engine) noteVersion(v quic.Version) {
	e.versionOnce.Do(func() { e.version = v.String() })
}

var (
	// errNoHandshake is recorded for dials that got no QUIC handshake in
	// time: nothing answers on the UDP port, or packets are lost.
	errNoHandshake = errors.New("no QUIC handshake within the timeout: is an HTTP/3 server listening on that UDP port?")
	errRunEnded    = errors.New("the run ended during the handshake")
)

// h3ParseErrors are the texts of http3's errors about a malformed response.
var h3ParseErrors = []string{
	"http3: invalid response",
	"http3: parsing frame failed",
	"http3: expected first frame to be a HEADERS frame",
	"http3: HEADERS frame too large",
	"http3: failed to read response headers",
	"http3: too many 1xx informational responses",
	"peer sent too much data",
}

// classify maps an HTTP/3 or QUIC error to its class, and returns the
// error to keep as the class's sample message.
func classify(err error) (run.ErrorClass, error) {
	var (
		te  *quic.TransportError
		ae  *quic.ApplicationError
		se  *quic.StreamError
		sre *quic.StatelessResetError
		ite *quic.IdleTimeoutError
	)
	switch {
	case err == run.ErrBodyMismatch:
		return run.ClassBodyMismatch, err
	case errors.As(err, &te) && te.ErrorCode.IsCryptoError():
		// TLS inside QUIC: certificate verification, alerts.
		return run.ClassTLS, err
	case run.IsTLSError(err):
		return run.ClassTLS, err
	case err == errNoHandshake || errors.As(err, &ite):
		return run.ClassTimeout, err
	case errors.Is(err, context.DeadlineExceeded) || run.IsTimeout(err):
		return run.ClassTimeout, run.ErrTimeout
	case errors.As(err, &sre):
		return run.ClassReset, err
	case errors.As(err, &se) && se.Remote:
		return run.ClassReset, err // the server reset the request stream
	case errors.As(err, &ae) && ae.Remote, errors.As(err, &te) && te.Remote:
		return run.ClassClosed, err // the server closed the connection
	case errors.Is(err, io.ErrUnexpectedEOF):
		return run.ClassClosed, err
	}
	msg := err.Error()
	for _, p := range h3ParseErrors {
		if strings.Contains(msg, p) {
			return run.ClassParse, err
		}
	}
	return run.Classify(err), err
}
