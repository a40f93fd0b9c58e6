package tcploop

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/loadlab/loadlab/gen/internal/run"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/sock"
)

// epoll data indexes of the loop's own descriptors (a slot's events carry
// its index, 0 or more).
const (
	maxEvents  = 512 // events one wait takes at most
	eventWake  = -1  // the loop's wake-up eventfd
	eventTimer = -2  // the fallback sleep timerfd
)

// epollPoller is the TCP loop's I/O on epoll (Config.IO epoll): edge-
// triggered readiness events, raw reads and writes on the sockets.
//
// Batched pacing (open loop with a pacing tolerance): between the pacing
// ticks the loop sleeps on quietfd, which holds only its wake-ups, instead
// of waking for every response; at the tick it collects every socket
// event at once. A response read late keeps its true completion time: each
// read takes the kernel's receive timestamp of its last segment (the
// loop's rx).
type epollPoller struct {
	l       *Loop
	epfd    int
	quietfd int // batched pacing: the wake-ups alone (-1 without)
	events  [maxEvents]unix.EpollEvent
	ts      unix.Timespec

	timerfd  int // -1, or the fallback sleep timer when epoll_pwait2 is unavailable
	timerAt  int64
	timerIts unix.ItimerSpec
}

// newEpollPoller makes the loop's epoll instances, with its wake-up
// eventfd (and, without epoll_pwait2, the timerfd it sleeps on) in them.
func newEpollPoller(l *Loop) (p *epollPoller, err error) {
	p = &epollPoller{l: l, epfd: -1, quietfd: -1, timerfd: -1}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: eventWake}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, l.wakefd, &ev); err != nil {
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	if !l.pwait2 {
		// No epoll_pwait2 (older kernel, or a seccomp filter refuses it):
		// sleep in epoll_wait on a timerfd armed with the ns deadline.
		if p.timerfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
			return nil, fmt.Errorf("timerfd_create: %w", err)
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: eventTimer}
		if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, p.timerfd, &ev); err != nil {
			return nil, fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	if l.batch {
		l.rx.Init() // reads keep the receive timestamps
		if p.quietfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
			return nil, fmt.Errorf("epoll_create1: %w", err)
		}
		for _, w := range []struct {
			fd int
			id int32
		}{{l.wakefd, eventWake}, {p.timerfd, eventTimer}} {
			if w.fd < 0 {
				continue
			}
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: w.id}
			if err := unix.EpollCtl(p.quietfd, unix.EPOLL_CTL_ADD, w.fd, &ev); err != nil {
				return nil, fmt.Errorf("epoll_ctl: %w", err)
			}
		}
	}
	return p, nil
}

func (p *epollPoller) close() {
	for _, fd := range []int{p.timerfd, p.quietfd, p.epfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// connect adds fd to epoll (edge-triggered, tagged with ss's index and
// generation) and connects it.
func (p *epollPoller) connect(ss *Slot, fd int) (bool, run.ErrorClass, error) {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: ss.Idx, Pad: ss.Gen}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return false, run.ClassOther, err
	}
	switch err := unix.Connect(fd, p.l.dst); err {
	case nil:
		return true, 0, nil
	case unix.EINPROGRESS:
		return false, 0, nil
	default:
		return false, run.Classify(err), err
	}
}

// connectResult reads the socket's SO_ERROR (on EPOLLOUT).
func (p *epollPoller) connectResult(ss *Slot) error { return socketError(ss.Fd) }

// socketError reads the outcome of a connect in progress (on EPOLLOUT).
func socketError(fd int) error {
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	return err
}

// stream is TLS for https://, else ss's Plain (which the slot owns, so
// that it costs nothing), reading with receive timestamps under batched
// pacing.
func (p *epollPoller) stream(ss *Slot) sock.Stream {
	l := p.l
	if l.tls != nil {
		return l.tls.NewConn(ss.Fd)
	}
	ss.plain.Fd = ss.Fd
	ss.plain.Rx = nil
	if l.batch {
		ss.plain.Rx = &l.rx
	}
	return &ss.plain
}

func (p *epollPoller) closeSocket(_ *Slot, fd int) { unix.Close(fd) }

func (p *epollPoller) arrival() int64 { return p.l.rx.Take() }

func (p *epollPoller) wait(now, until int64, h Handler) {
	l := p.l
	if l.batch {
		p.dispatch(p.pollWait(p.epfd, 0, 0), h)
		if h.Quiet() {
			at := min(until, l.NextScan)
			p.pollWait(p.quietfd, at-l.LC.Now(), at)
			p.drainWakeups()
			return
		}
		now = l.LC.Now()
	}
	at := min(until, l.NextScan)
	p.dispatch(p.pollWait(p.epfd, at-now, at), h)
}

// dispatch hands the n events of the last poll to h.
func (p *epollPoller) dispatch(n int, h Handler) {
	l := p.l
	if l.batch {
		t := time.Now()
		l.wallOff = t.UnixNano() - int64(t.Sub(l.LC.R.Start))
	}
	for i := 0; i < n; i++ {
		ev := &p.events[i]
		if ev.Fd < 0 {
			p.drainWakeup(ev.Fd)
			continue
		}
		h.Event(ev.Fd, ev.Pad, ev.Events)
	}
}

// drainWakeups empties the wake-up descriptors after a quiet sleep.
func (p *epollPoller) drainWakeups() {
	p.drainWakeup(eventWake)
	if p.timerfd >= 0 {
		p.drainWakeup(eventTimer)
	}
}

// pollWait blocks in epoll_pwait2, whose timeout has nanosecond resolution
// (epoll_wait's millisecond timeout would quantize the pacing). It is a raw
// system call: the loop keeps its P while it sleeps (see package rawio). A signal
// (e.g. the runtime's preemption request) ends the wait early with no
// events; the caller's next function call then lets the runtime in. Without
// epoll_pwait2 (probed once per run) the loop arms its timerfd with the
// deadline and sleeps in epoll_wait. ns is the timeout; at is the deadline
// it stands for, on the run's clock.
func (p *epollPoller) pollWait(epfd int, ns, at int64) int {
	if ns < 0 {
		ns = 0
	}
	if p.timerfd >= 0 {
		return p.waitTimer(epfd, ns, at)
	}
	p.ts = unix.NsecToTimespec(ns)
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd),
		uintptr(unsafe.Pointer(&p.events[0])), maxEvents,
		uintptr(unsafe.Pointer(&p.ts)), 0, 0)
	if e != 0 {
		return 0 // EINTR: a signal; the loop goes round and waits again
	}
	return int(n)
}

// waitTimer is pollWait without epoll_pwait2: the timerfd is re-armed only
// when the deadline moves (a loop woken by events keeps the timer it set).
func (p *epollPoller) waitTimer(epfd int, ns, at int64) int {
	timeout := 0
	if ns > 0 {
		timeout = -1
		if at != p.timerAt {
			p.timerAt = at
			p.timerIts.Value = unix.NsecToTimespec(ns)
			unix.TimerfdSettime(p.timerfd, 0, &p.timerIts, nil)
		}
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&p.events[0])), maxEvents, uintptr(timeout), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// drainWakeup empties the eventfd or timerfd that woke the loop.
func (p *epollPoller) drainWakeup(which int32) {
	var b [8]byte
	if which == eventWake {
		rawio.Read(p.l.wakefd, b[:])
		return
	}
	rawio.Read(p.timerfd, b[:])
	p.timerAt = 0
}

// Watch adds fd, a socket of the driver's own (the lean HTTP/3 loop's UDP
// sockets), to the loop's epoll, edge-triggered for input: its events come
// to the driver's Handler tagged id. The loop's poller must be epoll.
func (l *Loop) Watch(fd int, id int32) error {
	p, ok := l.poll.(*epollPoller)
	if !ok {
		return fmt.Errorf("the loop's poller is not epoll: it cannot watch a socket of the driver's own")
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: id}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}
