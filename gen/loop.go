package gen

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// Loop tuning.
const (
	maxEvents     = 512
	readBufSize   = 256 << 10 // per loop; every response is parsed in place here
	lateThreshold = int64(time.Millisecond)
	eventWake     = -1 // epoll data index of the loop's wake-up eventfd
	eventTimer    = -2 // epoll data index of the fallback sleep timerfd
)

// loop is one event loop: a locked OS thread pinned to one CPU, an epoll
// instance, the connections it owns and its own recorder. Nothing in it is
// shared with other loops while it runs.
type loop struct {
	id  int
	cpu int
	r   *run

	epfd   int
	wakefd int
	events [maxEvents]unix.EpollEvent
	ts     unix.Timespec
	buf    []byte

	dst    unix.Sockaddr   // target, this loop's own copy
	src    []unix.Sockaddr // --src-addrs, this loop's own copies
	linger unix.Linger     // SO_LINGER 0 for --close rst

	closes   atomic.Int64 // sockets this loop closed (read by the TIME_WAIT sampler)
	conns    []conn
	idle     []int32
	inflight int
	srcNext  int

	rec *recorder

	// open loop
	schedule
	stopping  bool
	ended     bool  // the drain is over: what is still owed has been given up
	stopWall  int64 // when the stop began (an interrupt stops early)
	drainEnd  int64
	nextScan  int64
	scanEvery int64

	nextSecond int64
	secIdx     int
	warmupSeen bool
	acct       threadAccount // this loop's thread: CPU, run-queue wait, its CPU's softirq and steal

	timerfd  int // -1, or the fallback sleep timer when epoll_pwait2 is unavailable
	timerAt  int64
	timerIts unix.ItimerSpec
}

// now returns nanoseconds since the run start (monotonic clock).
func (l *loop) now() int64 { return int64(time.Since(l.r.start)) }

// main runs the loop on the calling goroutine, which it locks to a thread
// pinned to l.cpu. It returns when the run has ended and drained.
func (l *loop) main() {
	defer l.r.loopsDone.Done()
	if err := l.setup(); err != nil {
		l.r.fail(err)
		return
	}
	defer l.teardown()
	l.r.ready.Done()
	<-l.r.go_
	if l.r.failed() {
		return // the run did not start (another loop's setup, or a late start)
	}

	if !l.open {
		now := l.now()
		for i := range l.conns {
			if l.quotaSpent() {
				break
			}
			l.dispatch(&l.conns[i], now, now)
		}
	}
	for {
		now := l.now()
		if !l.stopping && (now >= l.stopAt || l.r.stopped.Load() || l.quotaSpent()) {
			l.beginStop(now)
		}
		if now >= l.nextScan {
			l.scan(now)
		}
		if l.stopping {
			if l.inflight == 0 && l.pending.len() == 0 {
				break
			}
			if now >= l.drainEnd {
				l.abandon(now)
				break
			}
		}
		if !l.warmupSeen && now >= l.r.warmup {
			l.warmupSeen = true
			l.acct.begin()
		}
		if l.open && !l.stopping {
			l.admit(now)
		}
		if now >= l.nextSecond {
			l.flushSecond(int64(time.Second))
		}
		n := l.wait(l.wakeIn(now))
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
	l.finish()
}

// setup pins the thread, enters the network namespace and creates epoll.
func (l *loop) setup() error {
	runtime.LockOSThread()
	if err := pin.PinThread(l.cpu); err != nil {
		return err
	}
	// Sub-millisecond pacing: no timer slack on this thread.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if l.r.netns >= 0 {
		if err := unix.Setns(l.r.netns, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("enter network namespace %s: %w", l.r.cfg.NetNS, err)
		}
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
	if !l.r.pwait2 {
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
	unix.Close(l.wakefd)
	if l.timerfd >= 0 {
		unix.Close(l.timerfd)
	}
	unix.Close(l.epfd)
}

// wake interrupts the loop's epoll wait (safe from any goroutine).
func (l *loop) wake() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// wakeIn returns how long the loop may sleep: until the next intended send,
// timeout scan, second boundary, warmup end or stop, whichever is first.
func (l *loop) wakeIn(now int64) int64 {
	next := l.nextScan
	if l.nextSecond < next {
		next = l.nextSecond
	}
	if l.stopping {
		if l.drainEnd < next {
			next = l.drainEnd
		}
	} else {
		if l.stopAt < next {
			next = l.stopAt
		}
		if l.open && l.nextDue < next {
			next = l.nextDue
		}
	}
	if !l.warmupSeen && l.r.warmup < next {
		next = l.r.warmup
	}
	return next - now
}

// wait blocks in epoll_pwait2, whose timeout has nanosecond resolution
// (epoll_wait's millisecond timeout would quantize the pacing). It is a raw
// system call: the loop keeps its P while it sleeps (see rawio.go). A
// signal (e.g. the runtime's preemption request) ends the wait early with
// no events; the caller's next function call then lets the runtime in.
// Without epoll_pwait2 (probed once per run) the loop arms its timerfd
// with the deadline and sleeps in epoll_wait.
func (l *loop) wait(ns int64) int {
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

// waitTimer is wait without epoll_pwait2: the timerfd is re-armed only
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

// admit moves every request whose intended time has come to a free
// connection, or to the pending queue when all connections are busy. It
// first records how late this wakeup is for the earliest due request: the
// generator's own lag, whatever the server is doing. Each dispatch reads
// the clock afresh, so a long batch neither hides its own duration nor
// leaves requests that fell due meanwhile for the next wakeup.
func (l *loop) admit(now int64) {
	if !l.due(now) {
		return
	}
	l.rec.wokeLate(now, l.nextDue)
	for l.due(now) {
		due := l.take()
		if l.pending.len() == 0 && len(l.idle) > 0 {
			l.dispatch(l.popIdle(), due, now)
			now = l.now()
			continue
		}
		l.enqueue(l.rec, due, now)
	}
}

func (l *loop) popIdle() *conn {
	i := l.idle[len(l.idle)-1]
	l.idle = l.idle[:len(l.idle)-1]
	return &l.conns[i]
}

// next gives a connection that just finished a request its next request:
// immediately in closed loop, the oldest pending one in open loop.
func (l *loop) next(c *conn, now int64) {
	switch {
	case l.ended || (l.stopping && l.pending.len() == 0):
		l.idle = append(l.idle, c.idx)
	case !l.open:
		if l.stopping || l.quotaSpent() {
			l.idle = append(l.idle, c.idx)
			return
		}
		if c.retryAt > now {
			return // reconnect backoff: scan() dispatches it
		}
		l.dispatch(c, now, now)
	case l.pending.len() > 0:
		l.dispatch(c, l.pending.pop(), now)
	default:
		l.idle = append(l.idle, c.idx)
	}
}

// dispatch starts a request on c: connect first if needed, then write.
func (l *loop) dispatch(c *conn, intended, now int64) {
	c.intended = intended
	c.started = now // the timeout runs from here, through connect and handshake
	c.busy = true
	c.reused = c.fd >= 0
	c.retried = false
	l.started++
	c.written = 0
	l.inflight++
	if now-intended > lateThreshold && intended >= l.r.warmup {
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

func (l *loop) beginStop(now int64) {
	if l.open {
		// Requests due before the stop are still sent; later ones are not.
		l.admit(now)
	}
	l.stopping = true
	l.stopWall = now
	l.rec.windowEnd = min(now, l.stopAt)
	if !l.warmupSeen {
		l.warmupSeen = true // interrupted during the warmup: an empty window
		l.acct.begin()
	}
	l.acct.end()
	drain := int64(l.r.cfg.Timeout)
	if l.r.stopped.Load() && drain > int64(time.Second) {
		drain = int64(time.Second) // interrupted: finish quickly
	}
	l.drainEnd = now + drain
}

// abandon ends the drain: every request still in flight or pending is
// given up as a timeout at this moment (each has waited at least a timeout
// since its intended time, or the shortened drain of an interrupted run),
// so no owed request leaves the run without an outcome.
func (l *loop) abandon(now int64) {
	l.ended = true
	for i := range l.conns {
		if c := &l.conns[i]; c.busy {
			l.fail(c, ErrTimeout, errDrained, now)
			l.r.unfinished.Add(1)
		}
	}
	l.r.unfinished.Add(l.abandonPending(l.rec, now))
}

// flushSecond hands this second's tallies and interval histogram to the
// aggregator and starts the next second; dur is how much of the second
// the loop covered (less than 1 s for the last one).
func (l *loop) flushSecond(dur int64) {
	rep := secondReport{loop: l.id, t: l.secIdx, counts: l.rec.sec, hist: l.rec.interval, dur: dur}
	select {
	case h := <-l.r.histPool:
		l.rec.interval = h
	default:
		l.rec.interval = l.r.newHist() // aggregator behind: rare, bounded by its backlog
	}
	l.r.reports <- rep
	l.rec.sec = secondCounts{}
	l.secIdx++
	l.nextSecond += int64(time.Second)
}

// finish reports the last, partial second with its length.
func (l *loop) finish() {
	l.flushSecond(l.now() - (l.nextSecond - int64(time.Second)))
}
