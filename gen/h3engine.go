package gen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/loadlab/loadlab/pin"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/sys/unix"
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

// h3Engine is the state of one HTTP/3 run, shared by its loops.
type h3Engine struct {
	r        *run
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
	acct *processAccount

	bufNote string // UDP buffer remark for generator.notes
}

// newH3Engine builds the TLS and QUIC configurations and the request, and
// checks with one QUIC handshake that something answers.
func newH3Engine(r *run) (*h3Engine, error) {
	cfg := r.cfg
	e := &h3Engine{
		r:   r,
		dst: net.UDPAddrFromAddrPort(r.dst),
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
	e.tlsConf = r.tls.Std.Clone() // validateH3 refused uTLS presets: std is set
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

func (e *h3Engine) protocol() string { return "h3" }

// claim restricts the whole process to the run's CPUs (see the comment at
// the top of this file) and sets GOMAXPROCS to their number; release
// restores both.
func (e *h3Engine) claim(cpus pin.CPUSet, _ int) (func(), error) {
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
	e.acct = newProcessAccount(cpus, every)
	procs := runtime.GOMAXPROCS(len(cpus))
	return func() {
		runtime.GOMAXPROCS(procs)
		pin.RestoreProcess(before) //nolint:errcheck // best effort: the kernel may refuse CPUs a cpuset has since removed
	}, nil
}

// newDriver builds loop lc and its connections' UDP sockets (inside the
// run's network namespace: a socket stays in the namespace it was created
// in, whichever thread uses it later).
func (e *h3Engine) newDriver(lc *lifecycle, n int) (driver, error) {
	r := e.r
	cfg := r.cfg
	scanEvery := scanPeriod(cfg)
	l := &h3Loop{lc: lc, e: e, backoff: time.Duration(scanEvery), timerfd: -1}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	for j := 0; j < n; j++ {
		c := newH3Conn(l, j, e.req, cfg.VerifySHA256 != nil)
		l.conns = append(l.conns, c)
		if l.lc.open {
			l.idles = append(l.idles, c)
		}
	}
	next := lc.id * n
	err := r.inNetns(func() error {
		for _, c := range l.conns {
			var src net.IP
			if len(cfg.srcAddrs) > 0 {
				src = net.IP(cfg.srcAddrs[next%len(cfg.srcAddrs)].AsSlice())
				next++
			}
			udp, err := listenUDP(e.dst, src)
			if err != nil {
				return err
			}
			c.udp = udp
			c.tr = &quic.Transport{Conn: udp}
		}
		return nil
	})
	if err != nil {
		l.teardown()
		return nil, err
	}
	return l, nil
}

// closes: quic-go's UDP sockets leave no TIME_WAIT.
func (e *h3Engine) closes() int64 { return 0 }

// outcome gives the account of each CPU of the run (see processAccount).
func (e *h3Engine) outcome(o *outcome) {
	o.quicVersion = e.version
	o.perCPU = true
	o.shares = e.acct.shares()
	o.g.CPUs = e.cpus
	o.g.IO, o.g.IONote = "udp", "HTTP/3: quic-go's UDP sockets ({IO} chooses for the HTTP/1.1 and HTTP/2 loops)"
	o.g.Notes = append(o.g.Notes, "h3: busy and starved are per CPU of the run, from every thread of the process that ran there (quic-go's goroutines move between the run's CPUs)")
	if e.bufNote != "" {
		o.g.Notes = append(o.g.Notes, e.bufNote)
	}
}

// probe makes one QUIC handshake so that a run against nothing fails at once
// with a clear message (see probeQUIC).
func (e *h3Engine) probe() error {
	return e.r.inNetns(func() error {
		if e.bufNote == "" {
			e.bufNote = udpBufferNote("quic-go")
		}
		udp, err := listenUDP(e.dst, nil)
		if err != nil {
			return err
		}
		defer udp.Close()
		return probeQUIC(e.r, udp, e.tlsConf, e.quicConf)
	})
}

// probeQUIC makes one QUIC handshake with quic-go over udp, then closes the
// connection: no request is sent, whichever engine runs (the lean client
// would send its first request with its Finished). UDP has no connection
// refusal to wait for (unless an ICMP error comes back): a closed port
// looks like a silent one, so the probe waits up to 3 s (or the timeout). A
// handshake that fails otherwise (certificate, TLS alert) does not stop the
// run: its requests count those failures as errors. Call it inside the
// run's network namespace.
func probeQUIC(r *run, udp *net.UDPConn, tlsConf *tls.Config, qconf *quic.Config) error {
	wait := min(r.cfg.Timeout, 3*time.Second)
	if err := checkLocalTarget(r.cfg, r.dst.Addr()); err != nil {
		return err
	}
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	conf := tlsConf.Clone()
	conf.ClientSessionCache = nil // no session to resume from, none to leave behind
	qconf = qconf.Clone()
	qconf.HandshakeIdleTimeout = wait
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	dst := net.UDPAddrFromAddrPort(r.dst)
	qc, err := tr.Dial(ctx, dst, conf, qconf)
	if err == nil {
		qc.CloseWithError(0, "")
		return nil
	}
	if class, _ := classifyH3(err); class == ErrTimeout {
		return fmt.Errorf("no QUIC answer from %s within %v: start an HTTP/3 server on UDP port %d or check the URL", r.dst, wait, r.dst.Port())
	}
	var errno unix.Errno
	if errors.As(err, &errno) && errno == unix.ECONNREFUSED {
		return explain(errno, "nothing is listening on UDP %s (connection refused): start an HTTP/3 server or check the URL", r.dst)
	}
	return nil
}

// listenUDP opens a UDP socket for dst, bound to src if set. Call it
// inside the run's network namespace.
func listenUDP(dst *net.UDPAddr, src net.IP) (*net.UDPConn, error) {
	network := "udp4"
	if dst.IP.To4() == nil {
		network = "udp6"
	}
	c, err := net.ListenUDP(network, &net.UDPAddr{IP: src})
	if err != nil {
		return nil, fmt.Errorf("open UDP socket: %w", err)
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
	for _, h := range cfg.headers {
		switch {
		case strings.EqualFold(h.Name, "host"):
			req.Host = h.Value
			continue
		case strings.EqualFold(h.Name, "content-length"):
			continue // HTTP/3 sets it from the body
		}
		req.Header.Add(h.Name, h.Value)
	}
	if !hasHeader(cfg.headers, "user-agent") {
		req.Header.Set("User-Agent", "loadlab")
	}
	return req, nil
}

// noteVersion remembers the QUIC version of the first connection.
func (e *h3Engine) noteVersion(v quic.Version) {
	e.versionOnce.Do(func() { e.version = v.String() })
}
