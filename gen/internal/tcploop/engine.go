package tcploop

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/internal/fields"
	"github.com/loadlab/loadlab/pin"
)

// Engine is what the engines on raw-socket loops (HTTP/1.1, HTTP/2, and
// HTTP/3 on the lean QUIC client) have in common besides their loops: the
// target's address family, whether the kernel lets the loops call
// epoll_pwait2, the check that the target accepts connections and that
// the source addresses exist, a P per loop, and the loops' CPU accounts
// and socket closes. An engine embeds it; its Claim, Stats and Closes are
// the engine's.
type Engine struct {
	R      *run.Run
	Family int    // AF_INET or AF_INET6: the target's
	pwait2 bool   // the kernel lets us call epoll_pwait2
	IO     string // run.IOEpoll or run.IOUring: what the loops use
	IONote string // why (generator.io_note)
}

// NewEngine is the TCP engines' base: it checks the addresses, chooses the
// loops' I/O (ChooseIO) and checks that the target accepts connections.
func NewEngine(r *run.Run) (Engine, error) {
	e, err := NewBase(r)
	if err != nil {
		return e, err
	}
	if e.IO, e.IONote, err = ChooseIO(r.Spec); err != nil {
		return e, err
	}
	e.NotePwait2()
	return e, e.probe()
}

// NewBase is what every engine on raw-socket loops starts from (the TCP
// engines, and HTTP/3 on the lean QUIC client): the target's address
// family, the source addresses checked against it, and the epoll_pwait2
// probe.
func NewBase(r *run.Run) (Engine, error) {
	e := Engine{R: r, Family: unix.AF_INET, pwait2: probePwait2()}
	if r.Dst.Addr().Is6() {
		e.Family = unix.AF_INET6
	}
	for _, a := range r.Spec.SrcAddrs {
		if a.Is4() != r.Dst.Addr().Is4() {
			return e, fields.FieldErrorf("SrcAddrs", "%s is not of the target's address family (%s)", a, r.Dst.Addr())
		}
	}
	return e, nil
}

// NotePwait2 says in the result's notes when the epoll loops sleep on a
// timerfd.
func (e *Engine) NotePwait2() {
	if !e.pwait2 && e.IO == run.IOEpoll {
		e.R.Note("epoll_pwait2 is not available (older kernel or a seccomp filter): the loops sleep on a timerfd with epoll_wait, one more system call per sleep")
	}
}

// Claim: each loop holds a P for the whole run (raw system calls, see
// package rawio); one more P runs everything else.
func (e *Engine) Claim(_ pin.CPUSet, nloops int) (func(), error) {
	run.HoldPs(nloops)
	return func() { run.ReleasePs(nloops) }, nil
}

// probe makes one TCP connection to the target so that a run against
// nothing fails at once with a clear message instead of a result full of
// connect errors.
func (e *Engine) probe() error {
	r := e.R
	return r.InNetns(func() error {
		if err := run.CheckLocalTarget(r.Spec, r.Dst.Addr()); err != nil {
			return err
		}
		d := net.Dialer{Timeout: min(r.Spec.Timeout, 3*time.Second)}
		c, err := d.Dial("tcp", r.Dst.String())
		if err != nil {
			var errno unix.Errno
			switch {
			case errors.As(err, &errno) && errno == unix.ECONNRESET:
				// The server accepted and reset before the dialer read
				// SO_ERROR: something is listening. The run counts the
				// resets rather than refusing to start.
				r.StartDiag()
				return nil
			case errors.As(err, &errno) && errno == unix.ECONNREFUSED:
				return run.Explain(errno, "nothing is listening on %s (connection refused): start the server or check the URL", r.Dst)
			case run.IsTimeout(err):
				return fmt.Errorf("%s did not accept a TCP connection within %v: check that the server is up and reachable: %w", r.Dst, d.Timeout, err)
			}
			return fmt.Errorf("cannot connect to %s: %w", r.Dst, err)
		}
		c.Close()
		if err := e.CheckSrcAddrs(); err != nil {
			return err
		}
		r.StartDiag()
		return nil
	})
}

// CheckSrcAddrs binds a socket to each source address once, so that an
// address this host (or namespace) does not have fails before the run
// instead of turning every request into addr_not_avail.
func (e *Engine) CheckSrcAddrs() error {
	for _, a := range e.R.Spec.SrcAddrs {
		fd, err := unix.Socket(e.Family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
		err = unix.Bind(fd, Sockaddr(netip.AddrPortFrom(a, 0)))
		unix.Close(fd)
		if err != nil {
			return fields.FieldErrorf("SrcAddrs", "%s is not an address of this host (bind: %v): add it to an interface or list local addresses", a, err)
		}
	}
	return nil
}

// Sockaddr converts an address for the raw socket calls.
func Sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// NoPwait2 (tests only) makes probePwait2 fail, so tests can run the
// timerfd fallback here.
var NoPwait2 bool

// probePwait2 reports whether the loops can sleep in epoll_pwait2 (see
// rawio.ProbePwait2).
func probePwait2() bool { return !NoPwait2 && rawio.ProbePwait2() }
