package gen

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/gen/internal/tlsfd"

	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// Loop tuning.
const (
	maxEvents   = 512
	readBufSize = 256 << 10 // per loop; every response is parsed in place here
	eventWake   = -1        // epoll data index of the loop's wake-up eventfd
	eventTimer  = -2        // epoll data index of the fallback sleep timerfd
)

// epollLoop is what the loop of an engine on raw sockets is made of
// (HTTP/1.1 and HTTP/2): a locked OS thread pinned to one CPU, an
// epoll instance with its wake-up eventfd, the raw socket calls that dial
// the target, each connection's byte stream (plain or TLS), the loop's read
// buffer, the timeout scan's clock and the thread's CPU account. The
// protocol's driver embeds it and handles the events of its connections.
// Nothing in it is shared with other loops, or with any other goroutine,
// while it runs; so its lock is a no-op.
type epollLoop struct {
	*lifecycle

	family int
	pwait2 bool
	epfd   int
	wakefd int
	events [maxEvents]unix.EpollEvent
	ts     unix.Timespec
	buf    []byte

	dst     unix.Sockaddr   // target, this loop's own copy
	src     []unix.Sockaddr // source addresses, this loop's own copies
	srcNext int
	linger  unix.Linger  // SO_LINGER 0 for CloseRST
	tls     *tlsfd.Loop  // https://: the loop's TLS scratch space
	closes  atomic.Int64 // sockets this loop closed (read by the TIME_WAIT sampler)

	nextScan  int64
	scanEvery int64
	acct      threadAccount // this loop's thread: CPU, run-queue wait, its CPU's softirq and steal

	timerfd  int // -1, or the fallback sleep timer when epoll_pwait2 is unavailable
	timerAt  int64
	timerIts unix.ItimerSpec

	// Batched pacing (open loop with a pacing tolerance): between the
	// pacing ticks the loop sleeps on quietfd, which holds only its wake-ups,
	// instead of waking for every response; at the tick it collects every
	// socket event at once. A response read late keeps its true completion
	// time: each read takes the kernel's receive timestamp of its last
	// segment (rx), converted to the run's clock (wallOff).
	batch     bool
	quietfd   int
	rx        rawio.RxReader
	wallOff   int64 // wall clock minus the run's clock, ns, at the last poll
	unsettled int   // connections connecting, in their handshake or with bytes to write: they need prompt events

	// The loop's io_uring (--io uring; see uringio.go), nil on epoll.
	io    string   // IOEpoll or IOUring
	ur    *uringIO // the ring once set up
	conns int      // connection slots (sizes the ring)

	proto slotProto // the protocol's slots (the driver that embeds the loop)
}

// tcpLoop is the loop itself, for the engine (tcpLoopOf): h1Loop and h2Loop
// embed it.
func (l *epollLoop) tcpLoop() *epollLoop { return l }

// initEpoll prepares the loop of lifecycle lc (nothing is opened yet: setup
// does that on the loop's thread).
func (l *epollLoop) initEpoll(lc *lifecycle, e *tcpEngine, p slotProto, conns int) {
	r := lc.r
	l.proto = p
	l.conns, l.io = conns, e.io
	l.lifecycle = lc
	l.family, l.pwait2 = e.family, e.pwait2
	l.epfd, l.wakefd, l.timerfd, l.quietfd = -1, -1, -1, -1
	l.batch = lc.open && r.cfg.PacingTolerance > 0
	l.dst = sockaddr(r.dst)
	for _, a := range r.cfg.SrcAddrs {
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
	l.scanEvery = max(int64(time.Millisecond), min(int64(r.cfg.Timeout)/20, int64(10*time.Millisecond)))
	l.nextScan = l.scanEvery
}

// setup pins the thread, enters the network namespace and creates epoll.
func (l *epollLoop) setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.cpu); err != nil {
		return err
	}
	// Sub-millisecond pacing: no timer slack on this thread.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if err := l.r.enterNetns(); err != nil {
		return err
	}
	if l.io == IOUring {
		return l.setupUring()
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	l.epfd = epfd
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	l.wakefd = wfd
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: eventWake}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	if !l.pwait2 {
		// No epoll_pwait2 (older kernel, or a seccomp filter refuses it):
		// sleep in epoll_wait on a timerfd armed with the ns deadline.
		tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			return fmt.Errorf("timerfd_create: %w", err)
		}
		l.timerfd = tfd
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: eventTimer}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, tfd, &ev); err != nil {
			return fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	if l.batch {
		qfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return fmt.Errorf("epoll_create1: %w", err)
		}
		l.quietfd = qfd
		for _, w := range []struct {
			fd int
			id int32
		}{{l.wakefd, eventWake}, {l.timerfd, eventTimer}} {
			if w.fd < 0 {
				continue
			}
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: w.id}
			if err := unix.EpollCtl(qfd, unix.EPOLL_CTL_ADD, w.fd, &ev); err != nil {
				return fmt.Errorf("epoll_ctl: %w", err)
			}
		}
		l.rx.Init()
	}
	l.buf = make([]byte, readBufSize)
	l.acct.init(l.cpu)
	return nil
}

// closeFds closes the loop's own descriptors (its connections are the
// driver's to close first).
func (l *epollLoop) closeFds() {
	if l.ur != nil {
		l.ur.close()
	}
	for _, fd := range []int{l.wakefd, l.timerfd, l.quietfd, l.epfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (l *epollLoop) lock()         {}
func (l *epollLoop) unlock()       {}
func (l *epollLoop) finish()       {}
func (l *epollLoop) accountBegin() { l.acct.begin() }
func (l *epollLoop) accountEnd()   { l.acct.end() }

// wake interrupts the loop's epoll wait (safe from any goroutine).
func (l *epollLoop) wake() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// handler is the driver's side of the events: one connection slot's epoll
// event, tagged with the slot's index and socket generation.
type handler interface {
	event(idx, gen int32, ev uint32)
}

// waitEvents sleeps until until at the latest (or the next timeout scan) and
// hands every event that arrives to h.
//
// Batched pacing: the loop first collects the socket events that came in
// since it last looked (responses, read with their receive timestamps) and
// then, if quiet() (nothing pending, no connection that needs prompt
// events), sleeps through socket events until the deadline: the loop wakes
// once a pacing tick, sends what is due, then collects the responses.
func (l *epollLoop) waitEvents(now, until int64, h handler, quiet func() bool) {
	if l.ur != nil {
		l.waitUring(now, until, h, quiet)
		return
	}
	if l.batch {
		l.dispatch(l.pollWait(l.epfd, 0, 0), h)
		if quiet() {
			at := min(until, l.nextScan)
			l.pollWait(l.quietfd, at-l.now(), at)
			l.drainWakeups()
			return
		}
		now = l.now()
	}
	at := min(until, l.nextScan)
	l.dispatch(l.pollWait(l.epfd, at-now, at), h)
}

// dispatch hands the n events of the last poll to h.
func (l *epollLoop) dispatch(n int, h handler) {
	if l.batch {
		t := time.Now()
		l.wallOff = t.UnixNano() - int64(t.Sub(l.r.start))
	}
	for i := 0; i < n; i++ {
		ev := &l.events[i]
		if ev.Fd < 0 {
			l.drainWakeup(ev.Fd)
			continue
		}
		h.event(ev.Fd, ev.Pad, ev.Events)
	}
}

// drainWakeups empties the wake-up descriptors after a quiet sleep.
func (l *epollLoop) drainWakeups() {
	l.drainWakeup(eventWake)
	if l.timerfd >= 0 {
		l.drainWakeup(eventTimer)
	}
}

// doneAt returns when the response just read completed, on the run's
// clock: with batched pacing the receive timestamp of its last segment
// (never after now nor before the request was written), else now.
func (l *epollLoop) doneAt(now, written int64) int64 {
	if !l.batch {
		return now
	}
	var ts int64
	if l.ur != nil {
		ts = l.ur.take()
	} else {
		ts = l.rx.Take()
	}
	if ts == 0 {
		return now
	}
	return max(min(ts-l.wallOff, now), written)
}

// pollWait blocks in epoll_pwait2, whose timeout has nanosecond resolution
// (epoll_wait's millisecond timeout would quantize the pacing). It is a raw
// system call: the loop keeps its P while it sleeps (see package rawio). A signal
// (e.g. the runtime's preemption request) ends the wait early with no
// events; the caller's next function call then lets the runtime in. Without
// epoll_pwait2 (probed once per run) the loop arms its timerfd with the
// deadline and sleeps in epoll_wait. ns is the timeout; at is the deadline
// it stands for, on the run's clock.
func (l *epollLoop) pollWait(epfd int, ns, at int64) int {
	if ns < 0 {
		ns = 0
	}
	if l.timerfd >= 0 {
		return l.waitTimer(epfd, ns, at)
	}
	l.ts = unix.NsecToTimespec(ns)
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd),
		uintptr(unsafe.Pointer(&l.events[0])), maxEvents,
		uintptr(unsafe.Pointer(&l.ts)), 0, 0)
	if e != 0 {
		return 0 // EINTR: a signal; the loop goes round and waits again
	}
	return int(n)
}

// waitTimer is pollWait without epoll_pwait2: the timerfd is re-armed only
// when the deadline moves (a loop woken by events keeps the timer it set).
func (l *epollLoop) waitTimer(epfd int, ns, at int64) int {
	timeout := 0
	if ns > 0 {
		timeout = -1
		if at != l.timerAt {
			l.timerAt = at
			l.timerIts.Value = unix.NsecToTimespec(ns)
			unix.TimerfdSettime(l.timerfd, 0, &l.timerIts, nil)
		}
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&l.events[0])), maxEvents, uintptr(timeout), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// drainWakeup empties the eventfd or timerfd that woke the loop.
func (l *epollLoop) drainWakeup(which int32) {
	var b [8]byte
	if which == eventWake {
		rawio.Read(l.wakefd, b[:])
		return
	}
	rawio.Read(l.timerfd, b[:])
	l.timerAt = 0
}

// dial opens a new non-blocking socket to the target for the connection
// slot idx (socket generation gen), registers it with epoll and starts
// connecting: connected reports a connect that completed at once, else
// EPOLLOUT will say when it does.
func (l *epollLoop) dial(idx, gen int32) (fd int, connected bool, class ErrorClass, err error) {
	fd, err = unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, false, classify(err), err
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if l.batch {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) // see rawio.RxReader
	}
	if len(l.src) > 0 {
		// Bind the address only; the kernel picks the port at connect time
		// per (source, destination) pair, so each address has its own range.
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
		sa := l.src[l.srcNext]
		l.srcNext = (l.srcNext + 1) % len(l.src)
		if err := unix.Bind(fd, sa); err != nil {
			return fd, false, classify(err), err
		}
	}
	if l.ur != nil {
		return fd, false, 0, nil // dialSlot connects it through the ring
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: idx, Pad: gen}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fd, false, ErrOther, err
	}
	switch err := unix.Connect(fd, l.dst); err {
	case nil:
		return fd, true, 0, nil
	case unix.EINPROGRESS:
		return fd, false, 0, nil
	default:
		return fd, false, classify(err), err
	}
}

// connectResult reads the outcome of ss's connect in progress (on
// EPOLLOUT): the ring's completion, or the socket's SO_ERROR.
func (l *epollLoop) connectResult(ss *socketSlot) error {
	if l.ur != nil {
		return ss.ring.connErr
	}
	return connectResult(ss.fd)
}

// connectResult reads the outcome of a connect in progress (on EPOLLOUT).
func connectResult(fd int) error {
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	return err
}

// newSock returns the byte stream of a freshly connected socket: TLS for
// https://, else plain (which the caller owns, so that it costs nothing).
func (l *epollLoop) newSock(fd int, plain *sock.Plain, ring *uringSock) sock.Stream {
	if l.ur != nil {
		if l.tls != nil {
			return l.tls.NewConnVia(fd, ring)
		}
		return ring
	}
	if l.tls != nil {
		return l.tls.NewConn(fd)
	}
	plain.Fd = fd
	if l.batch {
		plain.Rx = &l.rx
	}
	return plain
}

// closeSocket closes fd and releases its stream. With CloseRST the kernel
// resets the connection and keeps no TIME_WAIT on this side.
func (l *epollLoop) closeSocket(fd int, s sock.Stream, ring *uringSock) {
	l.closes.Add(1)
	if s != nil {
		s.Release()
	}
	if l.r.cfg.Close == CloseRST {
		l.linger = unix.Linger{Onoff: 1}
		unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &l.linger)
	}
	if l.ur != nil && ring.u != nil && ring.fd == fd {
		l.ur.closeSock(ring) // through the ring, after what it queued for fd
		return
	}
	unix.Close(fd)
}
