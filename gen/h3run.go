package gen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadlab/loadlab/pin"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/sys/unix"
)

// The HTTP/3 engine.
//
// quic-go owns its UDP sockets' reads and runs every QUIC connection on
// goroutines of its own, so HTTP/3 cannot ride the epoll loops of the
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

// h3Engine is the state of one HTTP/3 run, shared by its loops.
type h3Engine struct {
	r        *run
	dst      *net.UDPAddr
	tlsConf  *tls.Config
	quicConf *quic.Config
	h3t      *http3.Transport // only wraps our own QUIC connections
	body     []byte           // request body (nil: requests are headers only)
	cpus     pin.CPUSet       // every CPU of the run (the process is restricted to them)
	loops    []*h3Loop
	abort    atomic.Bool // setup failed: loops and workers leave at once

	versionOnce sync.Once
	version     string

	// The process's threads per CPU over the measured window; loop 0
	// begins and ends it.
	acct *processAccount

	bufNote string // UDP buffer remark for generator.notes
}

// runH3 is Run for Config.HTTP3.
func runH3(ctx context.Context, cfg *Config) (*Result, error) {
	e, err := prepareH3(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.r.close()
	return e.execute(ctx)
}

// prepareH3 resolves the target, builds the TLS and QUIC configurations
// and checks with one QUIC handshake that something answers.
func prepareH3(ctx context.Context, cfg *Config) (*h3Engine, error) {
	t, _ := ParseTarget(cfg.URL)
	if t.Scheme != "https" {
		return nil, usage("--http3 needs an https:// URL (got %s)", cfg.URL)
	}
	dst, err := t.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	r := newRun(cfg, t, dst)
	if r.tls, err = newTLSClient(cfg, t); err != nil {
		return nil, err
	}
	e := &h3Engine{
		r:   r,
		dst: net.UDPAddrFromAddrPort(dst),
		quicConf: &quic.Config{
			Versions:             []quic.Version{quic.Version1},
			HandshakeIdleTimeout: cfg.Timeout,
			KeepAlivePeriod:      10 * time.Second, // keep idle connections of a slow open loop alive
			MaxIncomingStreams:   -1,               // servers may not open request streams
		},
		// Responses are read as sent: no Accept-Encoding, no decompression
		// (like the HTTP/1.1 engine).
		h3t:  &http3.Transport{DisableCompression: true},
		body: cfg.Body,
	}
	e.tlsConf = r.tls.std.Clone() // validateH3 refused uTLS presets: std is set
	e.tlsConf.NextProtos = []string{http3.NextProtoH3}
	if err := r.openNetns(); err != nil {
		return nil, err
	}
	if err := e.probe(); err != nil {
		r.close()
		return nil, err
	}
	return e, nil
}

// probe makes one QUIC handshake so that a run against nothing fails at once
// with a clear message. UDP has no connection refusal to wait for: a closed
// port looks like a silent one, so the probe waits up to 3 s (or the
// timeout). A handshake that fails otherwise (certificate, TLS alert) does
// not stop the run: its requests count those failures as errors.
func (e *h3Engine) probe() error {
	r := e.r
	wait := min(r.cfg.Timeout, 3*time.Second)
	return r.inNetns(func() error {
		if err := checkLocalTarget(r.cfg, r.dst.Addr()); err != nil {
			return err
		}
		if e.bufNote == "" {
			e.bufNote = udpBufferNote()
		}
		udp, err := e.listenUDP(nil)
		if err != nil {
			return err
		}
		defer udp.Close()
		tr := &quic.Transport{Conn: udp}
		defer tr.Close()
		conf := e.tlsConf.Clone()
		conf.ClientSessionCache = nil // no session to resume from, none to leave behind
		qconf := e.quicConf.Clone()
		qconf.HandshakeIdleTimeout = wait
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		qc, err := tr.Dial(ctx, e.dst, conf, qconf)
		if err == nil {
			qc.CloseWithError(0, "")
			return nil
		}
		if class, _ := classifyH3(err); class == ErrTimeout {
			return fmt.Errorf("no QUIC answer from %s within %v: start an HTTP/3 server on UDP port %d or check the URL", r.dst, wait, r.dst.Port())
		}
		var errno unix.Errno
		if errors.As(err, &errno) && errno == unix.ECONNREFUSED {
			return fmt.Errorf("nothing is listening on UDP %s (connection refused): start an HTTP/3 server or check the URL", r.dst)
		}
		return nil
	})
}

// listenUDP opens the UDP socket of one connection, bound to src if set.
// Call it inside the run's network namespace.
func (e *h3Engine) listenUDP(src net.IP) (*net.UDPConn, error) {
	network := "udp4"
	if e.dst.IP.To4() == nil {
		network = "udp6"
	}
	c, err := net.ListenUDP(network, &net.UDPAddr{IP: src})
	if err != nil {
		return nil, fmt.Errorf("open UDP socket: %v", err)
	}
	return c, nil
}

// newRequest builds the request every worker of the run reuses.
func (e *h3Engine) newRequest() (*http.Request, error) {
	cfg := e.r.cfg
	req, err := http.NewRequest(cfg.Method, cfg.URL, nil)
	if err != nil {
		return nil, usage("bad request: %v", err)
	}
	hasUA := false
	for _, h := range cfg.Headers {
		name, val, _ := strings.Cut(h, ":")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		switch strings.ToLower(name) {
		case "host":
			req.Host = val
			continue
		case "user-agent":
			hasUA = true
		case "content-length":
			continue // HTTP/3 sets it from the body
		}
		req.Header.Add(name, val)
	}
	if !hasUA {
		req.Header.Set("User-Agent", "loadlab")
	}
	return req, nil
}

// execute restricts the process to the run's CPUs, starts the loops,
// aggregates, and assembles the result.
func (e *h3Engine) execute(ctx context.Context) (*Result, error) {
	r := e.r
	cfg := r.cfg
	before, err := pin.Allowed()
	if err != nil {
		return nil, fmt.Errorf("read CPU affinity: %v", err)
	}
	cpus := cfg.CPUs
	if len(cpus) == 0 {
		cpus = before
	}
	e.cpus = cpus
	if err := pin.RestrictProcess(cpus); err != nil {
		return nil, fmt.Errorf("restrict the generator to CPUs %s: %v", cpus, err)
	}
	defer pin.RestoreProcess(before) // best effort: the kernel may refuse CPUs a cpuset has since removed
	nloops := min(len(cpus), cfg.shardConnections())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(len(cpus)))
	maxPending := cfg.MaxPending
	if maxPending == 0 {
		maxPending = int(math.Min(1e6, math.Max(1000, cfg.shardRate()*cfg.Timeout.Seconds())))
	}
	r.fillHistPool(nloops)
	e.acct = newProcessAccount(cpus, 50*time.Millisecond)
	req, err := e.newRequest()
	if err != nil {
		return nil, err
	}
	if err := e.buildLoops(nloops, maxPending, req); err != nil {
		e.closeSockets()
		return nil, err
	}
	r.ready.Add(nloops)
	r.loopsDone.Add(nloops)
	for _, l := range e.loops {
		go l.main()
	}
	r.ready.Wait()
	if err := r.awaitStart(ctx); err != nil {
		r.abortStart(err)
	}
	if r.failErr != nil {
		e.abort.Store(true)
		close(r.go_)
		r.loopsDone.Wait()
		return nil, r.failErr
	}
	agg := r.drive(ctx, nloops, func() {
		for _, l := range e.loops {
			l.wake()
		}
	})
	return r.result(agg, e.outcome(maxPending)), nil
}

// buildLoops creates the loops and their connections' UDP sockets (inside
// the run's network namespace: a socket stays in the namespace it was
// created in, whichever thread uses it later).
func (e *h3Engine) buildLoops(nloops, maxPending int, req *http.Request) error {
	r := e.r
	cfg := r.cfg
	scanEvery := max(int64(time.Millisecond), min(int64(cfg.Timeout)/20, int64(10*time.Millisecond)))
	for i := 0; i < nloops; i++ {
		l := &h3Loop{id: i, cpu: e.cpus[i], e: e, r: r, rec: newRecorder(r.warmup, r.histMax), backoff: time.Duration(scanEvery)}
		l.ctx, l.cancel = context.WithCancel(context.Background())
		n := share(cfg.shardConnections(), i, nloops)
		l.schedule = newSchedule(cfg, i, nloops, maxPending)
		l.nextSecond = int64(time.Second)
		for j := 0; j < n; j++ {
			c := newH3Conn(l, j, req, cfg.VerifySHA256 != nil)
			l.conns = append(l.conns, c)
			if l.open {
				l.idle = append(l.idle, c)
			}
		}
		e.loops = append(e.loops, l)
	}
	next := 0
	return r.inNetns(func() error {
		for _, l := range e.loops {
			for _, c := range l.conns {
				var src net.IP
				if len(cfg.SrcAddrs) > 0 {
					src = net.IP(cfg.SrcAddrs[next%len(cfg.SrcAddrs)].AsSlice())
					next++
				}
				udp, err := e.listenUDP(src)
				if err != nil {
					return err
				}
				c.udp = udp
				c.tr = &quic.Transport{Conn: udp}
			}
		}
		return nil
	})
}

// closeSockets closes every connection's socket (setup failed before the
// workers started).
func (e *h3Engine) closeSockets() {
	for _, l := range e.loops {
		for _, c := range l.conns {
			c.closeAll()
		}
	}
}

// noteVersion remembers the QUIC version of the first connection.
func (e *h3Engine) noteVersion(v quic.Version) {
	e.versionOnce.Do(func() { e.version = v.String() })
}

// outcome collects the loops' recorders and the generator's account of
// each CPU of the run (see processAccount).
func (e *h3Engine) outcome(maxPending int) outcome {
	o := outcome{protocol: "h3", quicVersion: e.version,
		g: Generator{CPUs: e.cpus, Loops: len(e.loops), MaxPending: maxPending}}
	for _, l := range e.loops {
		// The measured window ends at the stop, or earlier when interrupted.
		end := l.stopAt
		if l.stopWall > 0 && l.stopWall < end {
			end = l.stopWall
		}
		o.recs = append(o.recs, l.rec)
		o.ends = append(o.ends, end)
	}
	o.shares = e.acct.shares()
	o.g.Notes = append(o.g.Notes, "h3: busy and starved are per CPU of the run, from every thread of the process that ran there (quic-go's goroutines move between the run's CPUs)")
	if e.bufNote != "" {
		o.g.Notes = append(o.g.Notes, e.bufNote)
	}
	return o
}
