package gen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/tlsfd"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/pin"
)

// tcpEngine is what the engines on raw TCP sockets (HTTP/1.1, HTTP/2) have
// in common besides their TCP loops: the target's address family, whether
// the kernel lets the loops call epoll_pwait2, the check that the target
// accepts connections and that the source addresses exist, a P per loop,
// and the loops' CPU accounts and socket closes.
type tcpEngine struct {
	r      *run
	family int
	pwait2 bool   // the kernel lets us call epoll_pwait2
	io     string // IOEpoll or IOUring: what the loops use
	ioNote string // why (generator.io_note)
}

// newTCPEngine checks the addresses and that the target accepts
// connections.
func newTCPEngine(r *run) (tcpEngine, error) {
	e, err := newLoopEngine(r)
	if err != nil {
		return e, err
	}
	if e.io, e.ioNote, err = chooseIO(r); err != nil {
		return e, err
	}
	e.notePwait2()
	return e, e.probe()
}

// newLoopEngine is what every engine on raw-socket loops starts from (the
// TCP engines, and HTTP/3 on the lean QUIC client): the target's address
// family, the source addresses checked against it, and the epoll_pwait2
// probe.
func newLoopEngine(r *run) (tcpEngine, error) {
	e := tcpEngine{r: r, family: unix.AF_INET, pwait2: probePwait2()}
	if r.dst.Addr().Is6() {
		e.family = unix.AF_INET6
	}
	for _, a := range r.cfg.srcAddrs {
		if a.Is4() != r.dst.Addr().Is4() {
			return e, fieldErr("SrcAddrs", "%s is not of the target's address family (%s)", a, r.dst.Addr())
		}
	}
	return e, nil
}

// notePwait2 says in the result's notes when the epoll loops sleep on a
// timerfd.
func (e *tcpEngine) notePwait2() {
	if !e.pwait2 && e.io == IOEpoll {
		e.r.notes = append(e.r.notes, "epoll_pwait2 is not available (older kernel or a seccomp filter): the loops sleep on a timerfd with epoll_wait, one more system call per sleep")
	}
}

// claim: each loop holds a P for the whole run (raw system calls, see
// package rawio); one more P runs everything else.
func (e *tcpEngine) claim(_ pin.CPUSet, nloops int) (func(), error) {
	holdPs(nloops)
	return func() { releasePs(nloops) }, nil
}

// outcome: each loop's thread is pinned to its own CPU, so its account is
// its CPU's.
func (e *tcpEngine) outcome(o *outcome) {
	o.g.IO, o.g.IONote = e.io, e.ioNote
	for _, lc := range e.r.loops {
		o.shares = append(o.shares, tcpLoopOf(lc).acct.share())
	}
}

// tcpLoopOf is the TCP event loop under lc's driver (an h1Loop or an
// h2Loop: both embed it). The run's one list of loops (run.loops) is the
// only one; the engine reads its loops from there.
func tcpLoopOf(lc *lifecycle) *tcpLoop { return lc.d.(interface{ loop() *tcpLoop }).loop() }

func (e *tcpEngine) closes() int64 {
	var n int64
	for _, lc := range e.r.loops {
		n += tcpLoopOf(lc).closes.Load()
	}
	return n
}

// probe makes one TCP connection to the target so that a run against
// nothing fails at once with a clear message instead of a result full of
// connect errors.
func (e *tcpEngine) probe() error {
	r := e.r
	return r.inNetns(func() error {
		if err := checkLocalTarget(r.cfg, r.dst.Addr()); err != nil {
			return err
		}
		d := net.Dialer{Timeout: min(r.cfg.Timeout, 3*time.Second)}
		c, err := d.Dial("tcp", r.dst.String())
		if err != nil {
			var errno unix.Errno
			switch {
			case errors.As(err, &errno) && errno == unix.ECONNRESET:
				// The server accepted and reset before the dialer read
				// SO_ERROR: something is listening. The run counts the
				// resets rather than refusing to start.
				r.startDiag()
				return nil
			case errors.As(err, &errno) && errno == unix.ECONNREFUSED:
				return explain(errno, "nothing is listening on %s (connection refused): start the server or check the URL", r.dst)
			case isTimeout(err):
				return fmt.Errorf("%s did not accept a TCP connection within %v: check that the server is up and reachable: %w", r.dst, d.Timeout, err)
			}
			return fmt.Errorf("cannot connect to %s: %w", r.dst, err)
		}
		c.Close()
		if err := e.checkSrcAddrs(); err != nil {
			return err
		}
		r.startDiag()
		return nil
	})
}

// checkSrcAddrs binds a socket to each source address once, so that an
// address this host (or namespace) does not have fails before the run
// instead of turning every request into addr_not_avail.
func (e *tcpEngine) checkSrcAddrs() error {
	for _, a := range e.r.cfg.srcAddrs {
		fd, err := unix.Socket(e.family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
		err = unix.Bind(fd, sockaddr(netip.AddrPortFrom(a, 0)))
		unix.Close(fd)
		if err != nil {
			return fieldErr("SrcAddrs", "%s is not an address of this host (bind: %v): add it to an interface or list local addresses", a, err)
		}
	}
	return nil
}

// sockaddr converts an address for the raw socket calls.
func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// noPwait2 makes probePwait2 fail, so tests can run the timerfd fallback
// here.
var noPwait2 bool

// probePwait2 reports whether the loops can sleep in epoll_pwait2 (see
// rawio.ProbePwait2).
func probePwait2() bool { return !noPwait2 && rawio.ProbePwait2() }

// initLoop prepares the loop of lifecycle lc (nothing is opened yet: setup
// does that on the loop's thread).
func (l *tcpLoop) initLoop(lc *lifecycle, e *tcpEngine, p slotProto, conns int) {
	r := lc.r
	l.proto = p
	l.nslots = conns
	l.newPoller = func(l *tcpLoop) (poller, error) { return newEpollPoller(l) }
	if e.io == IOUring {
		l.newPoller = func(l *tcpLoop) (poller, error) { return newUringPoller(l) }
	}
	l.lc = lc
	l.family, l.pwait2 = e.family, e.pwait2
	l.wakefd = -1
	l.batch = lc.open && r.cfg.PacingTolerance > 0
	l.dst = sockaddr(r.dst)
	for _, a := range r.cfg.srcAddrs {
		l.src = append(l.src, sockaddr(netip.AddrPortFrom(a, 0)))
	}
	if len(l.src) > 0 {
		l.srcNext = lc.id % len(l.src)
	}
	if r.tls != nil {
		var rx *rawio.RxReader
		if l.batch {
			rx = &l.rx // records are read with their receive timestamps
		}
		l.tls = tlsfd.NewLoop(&r.tls.Client, rx)
	}
	l.scanEvery = scanPeriod(r.cfg)
	l.nextScan = l.scanEvery
}

// scanPeriod is how often a loop looks for requests past their timeout and
// slots whose backoff has passed: a twentieth of the timeout, between 1 ms
// and 10 ms.
func scanPeriod(cfg *Prepared) int64 {
	return max(int64(time.Millisecond), min(int64(cfg.Timeout)/20, int64(10*time.Millisecond)))
}
