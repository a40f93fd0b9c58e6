package gen

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/gen/internal/tlsfd"

	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// Loop tuning.
const (
	readBufSize = 256 << 10 // per loop; every response is parsed in place here
	// readBudget is how many bytes one connection reads per wakeup at
	// most: a server that sends faster than the loop parses cannot keep
	// it reading one socket while the others, the schedule and the
	// timeout scan wait. The rest is read after the loop's other events
	// (readLater).
	readBudget = readBufSize
)

// tcpLoop is what the loop of an engine on raw sockets is made of
// (HTTP/1.1 and HTTP/2): a locked OS thread pinned to one CPU, its poller
// (epoll or io_uring, behind one seam: poller.go) with its wake-up
// eventfd, the raw socket calls that dial the target, each connection's
// byte stream (plain or TLS, chosen by the poller), the loop's read
// buffer, the timeout scan's clock and the thread's CPU account. The
// protocol's driver embeds it and handles the events of its connections.
// Nothing in it is shared with other loops, or with any other goroutine,
// while it runs; so its lock is a no-op.
type tcpLoop struct {
	lc *lifecycle // the shared lifecycle: the schedule, the stop and the drain (the driver's seam to it)

	family int
	pwait2 bool
	poll   poller // epoll or io_uring (Config.IO)
	wakefd int    // the eventfd wake writes to
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
	liveAt    accountSample // Config.Live: the account's sample at the last second's end

	// Batched pacing (open loop with a pacing tolerance): the loop wakes
	// once a pacing tick, sends what is due, then collects every response
	// at once (see the pollers). A response read late keeps its true
	// completion time: the kernel's receive timestamp of its last segment
	// (rx on epoll, the ring's own on io_uring), converted to the run's
	// clock (wallOff).
	batch     bool
	rx        rawio.RxReader
	wallOff   int64 // wall clock minus the run's clock, ns, at the last poll
	unsettled int   // connections connecting, in their handshake or with bytes to write: they need prompt events

	newPoller func(*tcpLoop) (poller, error) // makes poll on the loop's thread (Config.IO: epoll or io_uring)
	nslots    int                            // connection slots (sizes the ring)

	// Slots whose reads stopped at readBudget with bytes left (an edge-
	// triggered poller tells of them no more): their events are handed
	// to the driver again at the next wait, after the others'.
	later, laterNow []*socketSlot

	proto slotProto // the protocol's slots (the driver that embeds the loop)
}

// loop is the loop itself, for the engine (tcpLoopOf): h1Loop and h2Loop
// embed it.
func (l *tcpLoop) loop() *tcpLoop { return l }

// setup pins the thread, enters the network namespace and makes the
// loop's poller.
func (l *tcpLoop) setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.lc.cpu); err != nil {
		return err
	}
	// Sub-millisecond pacing: no timer slack on this thread.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if err := l.lc.r.enterNetns(); err != nil {
		return err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	l.wakefd = wfd
	if l.poll, err = l.newPoller(l); err != nil {
		return err
	}
	l.buf = make([]byte, readBufSize)
	l.later = make([]*socketSlot, 0, l.nslots)
	l.laterNow = make([]*socketSlot, 0, l.nslots)
	l.acct.init(l.lc.cpu)
	return nil
}

// closeFds closes the loop's own descriptors (its connections are the
// driver's to close first).
func (l *tcpLoop) closeFds() {
	if l.poll != nil {
		l.poll.close()
	}
	if l.wakefd >= 0 {
		unix.Close(l.wakefd)
	}
}

func (l *tcpLoop) lock()         {}
func (l *tcpLoop) unlock()       {}
func (l *tcpLoop) finish()       {}
func (l *tcpLoop) accountBegin() { l.acct.begin() }

// openConns counts the loop's slots that have a socket.
func (l *tcpLoop) openConns() int {
	n := 0
	for i := 0; i < l.nslots; i++ {
		if l.proto.slotOpen(int32(i)) {
			n++
		}
	}
	return n
}

// liveShare is the loop thread's account since the previous call (the
// first call: none yet). On the loop's thread.
func (l *tcpLoop) liveShare() (LiveCPU, bool) {
	s := l.acct.sample()
	prev := l.liveAt
	l.liveAt = s
	if prev.at.IsZero() {
		return LiveCPU{}, false
	}
	a := threadAccount{t0: prev, t1: s}
	busy, starved, idle := a.share().split()
	return LiveCPU{CPU: l.lc.cpu, Busy: busy, Starved: starved, Idle: idle}, true
}
func (l *tcpLoop) accountEnd() { l.acct.end() }

// wake interrupts the loop's wait (safe from any goroutine).
func (l *tcpLoop) wake() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// handler is the driver's side of the events: one connection slot's event
// (epoll's bits: the ring's completions say the same), tagged with the
// slot's index and socket generation.
type handler interface {
	event(idx, gen int32, ev uint32)
	// quiet reports whether batched pacing may sleep through socket
	// events: nothing waits in the pending queue for a connection, and no
	// connection needs prompt events.
	quiet() bool
}

// waitEvents sleeps until until at the latest (or the next timeout scan) and
// hands every event that arrives to h (the poller's wait). When reads
// stopped at their budget it does not sleep: it takes the events already
// in, then has the stopped slots read on.
func (l *tcpLoop) waitEvents(now, until int64, h handler) {
	if len(l.later) == 0 {
		l.poll.wait(now, until, h)
		return
	}
	l.later, l.laterNow = l.laterNow[:0], l.later
	l.poll.wait(now, now, h)
	for _, ss := range l.laterNow {
		ss.later = false
		if ss.fd >= 0 && ss.laterGen == ss.gen {
			h.event(ss.idx, ss.gen, ss.laterEv|unix.EPOLLIN)
		}
	}
}

// readLater notes that ss's read stopped at readBudget with bytes left: ev
// (the event that began it) is handed to the driver again at the loop's
// next wait.
func (l *tcpLoop) readLater(ss *socketSlot, ev uint32) {
	ev &= unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	if ss.later {
		if ss.laterGen != ss.gen {
			ss.laterGen, ss.laterEv = ss.gen, ev
		} else {
			ss.laterEv |= ev
		}
		return
	}
	ss.later, ss.laterGen, ss.laterEv = true, ss.gen, ev
	l.later = append(l.later, ss)
}

// doneAt returns when the response just read completed, on the run's
// clock: with batched pacing the receive timestamp of its last segment
// (never after now nor before the request was written), else now.
func (l *tcpLoop) doneAt(now, written int64) int64 {
	if !l.batch {
		return now
	}
	ts := l.poll.arrival()
	if ts == 0 {
		return now
	}
	return max(min(ts-l.wallOff, now), written)
}

// dial opens a new non-blocking socket to the target for slot ss (its
// generation already moved on), binds it to the next source address if
// any, and has the poller connect it: connected reports a connect that
// completed at once, else an event will say when it does.
func (l *tcpLoop) dial(ss *socketSlot) (fd int, connected bool, class ErrorClass, err error) {
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
	connected, class, err = l.poll.connect(ss, fd)
	return fd, connected, class, err
}

// closeSocket closes ss's socket and releases its stream. With CloseRST
// the kernel resets the connection and keeps no TIME_WAIT on this side.
func (l *tcpLoop) closeSocket(ss *socketSlot) {
	l.closes.Add(1)
	if ss.s != nil {
		ss.s.Release()
	}
	if l.lc.r.cfg.Close == CloseRST {
		l.linger = unix.Linger{Onoff: 1}
		unix.SetsockoptLinger(ss.fd, unix.SOL_SOCKET, unix.SO_LINGER, &l.linger)
	}
	l.poll.closeSocket(ss, ss.fd)
}

// poller is the TCP loop's I/O seam: how a slot's new socket is
// registered and connected, the byte stream a connected socket reads and
// writes through, how it is closed, how the loop sleeps until something
// arrives, and when the response just read arrived. epollPoller (epoll.go)
// and uringPoller (uringio.go) implement it; the loop (tcploop.go) and the
// protocols never ask which one they have. Not safe for concurrent use:
// only the loop's thread calls it.
type poller interface {
	// connect registers fd, ss's new socket (bound, not yet connected),
	// and starts connecting it to the target: connected reports a connect
	// that completed at once, else an event says when it does.
	connect(ss *socketSlot, fd int) (connected bool, class ErrorClass, err error)
	// connectResult is the outcome of ss's connect in progress, once an
	// event said it ended.
	connectResult(ss *socketSlot) error
	// stream is the byte stream of ss's connected socket: TLS over it for
	// https://, else the socket itself.
	stream(ss *socketSlot) sock.Stream
	// closeSocket closes ss's socket fd, after what was queued for it.
	closeSocket(ss *socketSlot, fd int)
	// wait sleeps until until (ns on the run's clock) at the latest, or
	// the next timeout scan, and hands every event that arrives to h.
	// Batched pacing: if h.quiet() once the events already in are handled,
	// it sleeps through socket events until the deadline.
	wait(now, until int64, h handler)
	// arrival is when the bytes just read arrived, the kernel's receive
	// timestamp on the wall clock, ns (batched pacing; 0: not known).
	arrival() int64
	// close releases the poller's descriptors (the slots' sockets are
	// closed before).
	close()
}
