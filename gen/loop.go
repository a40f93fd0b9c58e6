package gen

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

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

// loop is one HTTP/1.1 event loop (the engine's driver): a locked OS thread
// pinned to one CPU, an epoll instance and the connections it owns. Nothing
// in it is shared with other loops, or with any other goroutine, while it
// runs; so its lock is a no-op.
type loop struct {
	*lifecycle
	e *h1Engine

	epfd   int
	wakefd int
	events [maxEvents]unix.EpollEvent
	ts     unix.Timespec
	buf    []byte

	dst    unix.Sockaddr   // target, this loop's own copy
	src    []unix.Sockaddr // source addresses, this loop's own copies
	linger unix.Linger     // SO_LINGER 0 for CloseRST
	tls    *tlsLoop        // https://: the loop's TLS scratch space

	closes  atomic.Int64 // sockets this loop closed (read by the TIME_WAIT sampler)
	conns   []conn
	idles   []int32
	busy    int // requests in flight
	srcNext int

	nextScan  int64
	scanEvery int64
	acct      threadAccount // this loop's thread: CPU, run-queue wait, its CPU's softirq and steal

	timerfd  int // -1, or the fallback sleep timer when epoll_pwait2 is unavailable
	timerAt  int64
	timerIts unix.ItimerSpec
}

// newLoop builds loop lc of e with n connections.
func newLoop(e *h1Engine, lc *lifecycle, n int) *loop {
	cfg := e.r.cfg
	l := &loop{lifecycle: lc, e: e, epfd: -1, wakefd: -1, timerfd: -1}
	l.dst = sockaddr(e.r.dst)
	for _, a := range cfg.SrcAddrs {
		l.src = append(l.src, sockaddr(netip.AddrPortFrom(a, 0)))
	}
	if len(l.src) > 0 {
		l.srcNext = lc.id % len(l.src)
	}
	if e.r.tls != nil {
		l.tls = e.r.tls.loopState()
	}
	l.conns = make([]conn, n)
	l.idles = make([]int32, 0, n)
	for j := range l.conns {
		l.conns[j].init(j, cfg.VerifySHA256 != nil, cfg.Method == "HEAD")
		if l.open {
			l.idles = append(l.idles, int32(j))
		}
	}
	l.scanEvery = max(int64(time.Millisecond), min(int64(cfg.Timeout)/20, int64(10*time.Millisecond)))
	l.nextScan = l.scanEvery
	return l
}

// setup pins the thread, enters the network namespace and creates epoll.
func (l *loop) setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.cpu); err != nil {
		return err
	}
	// Sub-millisecond pacing: no timer slack on this thread.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if err := l.r.enterNetns(); err != nil {
		return err
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
	if !l.e.pwait2 {
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
	l.buf = make([]byte, readBufSize)
	l.acct.init(l.cpu)
	return nil
}

func (l *loop) teardown() {
	for i := range l.conns {
		if l.conns[i].fd >= 0 {
			l.closeConn(&l.conns[i])
		}
	}
	for _, fd := range []int{l.wakefd, l.timerfd, l.epfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// begin: in closed loop every connection starts its first request.
func (l *loop) begin(now int64) {
	if l.open {
		return
	}
	for i := range l.conns {
		if l.quotaSpent() {
			break
		}
		l.dispatch(&l.conns[i], now, now)
	}
}

func (l *loop) lock()         {}
func (l *loop) unlock()       {}
func (l *loop) inflight() int { return l.busy }
func (l *loop) finish()       {}

func (l *loop) accountBegin() { l.acct.begin() }
func (l *loop) accountEnd()   { l.acct.end() }

// idle pops a free connection.
func (l *loop) idle() (int, bool) {
	i, ok := popLast(&l.idles)
	return int(i), ok
}

func (l *loop) send(c int, intended, now int64) { l.dispatch(&l.conns[c], intended, now) }

// wake interrupts the loop's epoll wait (safe from any goroutine).
func (l *loop) wake() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// tick fails requests past their timeout and restarts closed-loop
// connections whose reconnect backoff has passed, every scanEvery.
func (l *loop) tick(now int64) {
	if now >= l.nextScan {
		l.scan(now)
	}
}

// giveUp fails every request in flight as a timeout (the drain is over).
func (l *loop) giveUp(now int64) int {
	n := 0
	for i := range l.conns {
		if c := &l.conns[i]; c.busy {
			l.fail(c, ErrTimeout, errDrained, now)
			n++
		}
	}
	return n
}

// wait sleeps until until at the latest (or the next timeout scan) and
// handles the events that arrive.
func (l *loop) wait(now, until int64) {
	n := l.pollWait(min(until, l.nextScan) - now)
	for i := 0; i < n; i++ {
		ev := &l.events[i]
		if ev.Fd < 0 {
			l.drainWakeup(ev.Fd)
			continue
		}
		c := &l.conns[ev.Fd]
		if c.gen != ev.Pad || c.fd < 0 {
			continue // stale event of a closed socket
		}
		l.handle(c, ev.Events)
	}
}

// pollWait blocks in epoll_pwait2, whose timeout has nanosecond resolution
// (epoll_wait's millisecond timeout would quantize the pacing). It is a raw
// system call: the loop keeps its P while it sleeps (see rawio.go). A signal
// (e.g. the runtime's preemption request) ends the wait early with no
// events; the caller's next function call then lets the runtime in. Without
// epoll_pwait2 (probed once per run) the loop arms its timerfd with the
// deadline and sleeps in epoll_wait.
func (l *loop) pollWait(ns int64) int {
	if ns < 0 {
		ns = 0
	}
	if l.timerfd >= 0 {
		return l.waitTimer(ns)
	}
	l.ts = unix.NsecToTimespec(ns)
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(l.epfd),
		uintptr(unsafe.Pointer(&l.events[0])), maxEvents,
		uintptr(unsafe.Pointer(&l.ts)), 0, 0)
	if e != 0 {
		return 0 // EINTR: a signal; the loop goes round and waits again
	}
	return int(n)
}

// waitTimer is pollWait without epoll_pwait2: the timerfd is re-armed only
// when the deadline moves.
func (l *loop) waitTimer(ns int64) int {
	timeout := 0
	if ns > 0 {
		timeout = -1
		at := l.now() + ns
		if at != l.timerAt {
			l.timerAt = at
			l.timerIts.Value = unix.NsecToTimespec(ns)
			unix.TimerfdSettime(l.timerfd, 0, &l.timerIts, nil)
		}
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(l.epfd),
		uintptr(unsafe.Pointer(&l.events[0])), maxEvents, uintptr(timeout), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// drainWakeup empties the eventfd or timerfd that woke the loop.
func (l *loop) drainWakeup(which int32) {
	var b [8]byte
	if which == eventWake {
		rawRead(l.wakefd, b[:])
		return
	}
	rawRead(l.timerfd, b[:])
	l.timerAt = 0
}

// next gives a connection that just finished a request its next request:
// immediately in closed loop, the oldest pending one in open loop.
func (l *loop) next(c *conn, now int64) {
	switch {
	case l.ended || (l.stopping && l.pending.len() == 0):
		l.idles = append(l.idles, c.idx)
	case !l.open:
		if l.stopping || l.quotaSpent() {
			l.idles = append(l.idles, c.idx)
			return
		}
		if c.retryAt > now {
			return // reconnect backoff: scan() dispatches it
		}
		l.dispatch(c, now, now)
	case l.pending.len() > 0:
		l.dispatch(c, l.pending.pop(), now)
	default:
		l.idles = append(l.idles, c.idx)
	}
}

// dispatch starts a request on c: connect first if needed, then write. The
// request carries its intended time (the coordinated-omission correction,
// see recorder): in open loop its schedule slot, in closed loop now.
func (l *loop) dispatch(c *conn, intended, now int64) {
	c.intended = intended
	c.started = now // the timeout runs from here, through connect and handshake
	c.busy = true
	c.reused = c.fd >= 0
	c.retried = false
	l.started++
	c.written = 0
	l.busy++
	if now-intended > lateThreshold && l.rec.owed(intended) {
		l.rec.lateSends++
	}
	if c.fd < 0 {
		l.connect(c, now)
		return
	}
	l.writeRequest(c, now)
}

// scan fails requests past their timeout (counted from when work on them
// began: connect, handshake and write included) and restarts closed-loop
// connections whose reconnect backoff has passed.
func (l *loop) scan(now int64) {
	l.nextScan = now + l.scanEvery
	to := int64(l.r.cfg.Timeout)
	for i := range l.conns {
		c := &l.conns[i]
		if c.busy && now-c.started > to {
			l.fail(c, ErrTimeout, errTimeout, now)
			continue
		}
		if !l.open && !l.stopping && !c.busy && c.retryAt != 0 && c.retryAt <= now && !l.quotaSpent() {
			c.retryAt = 0
			l.dispatch(c, now, now)
		}
	}
}
