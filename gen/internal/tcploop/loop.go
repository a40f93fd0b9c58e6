package tcploop

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// Loop tuning.
const (
	readBufSize = 256 << 10 // per loop; every response is parsed in place here
	// ReadBudget is how many bytes one connection reads per wakeup at
	// most: a server that sends faster than the loop parses cannot keep
	// it reading one socket while the others, the schedule and the
	// timeout scan wait. The rest is read after the loop's other events
	// (ReadLater).
	ReadBudget = readBufSize
)

// Loop is what the loop of an engine on raw sockets is made of
// (HTTP/1.1, HTTP/2, lean HTTP/3): a locked OS thread pinned to one CPU,
// its poller (epoll or io_uring, behind one seam: Poller) with its wake-up
// eventfd, the raw socket calls that dial the target, each connection's
// byte stream (plain or TLS, chosen by the poller), the loop's read
// buffer, the timeout scan's clock and the thread's CPU account. The
// protocol's driver embeds it and handles the events of its connections.
// Nothing in it is shared with other loops, or with any other goroutine,
// while it runs; so its lock is a no-op.
type Loop struct {
	LC  *run.Lifecycle // the shared lifecycle: the schedule, the stop and the drain (the driver's seam to it)
	Buf []byte         // the loop's read buffer: every response is parsed in place here

	family int
	pwait2 bool
	poll   poller // epoll or io_uring (Config.IO)
	wakefd int    // the eventfd wake writes to

	dst     unix.Sockaddr   // target, this loop's own copy
	src     []unix.Sockaddr // source addresses, this loop's own copies
	srcNext int
	linger  unix.Linger  // SO_LINGER 0 for CloseRST
	tls     *tlsfd.Loop  // https://: the loop's TLS scratch space
	closes  atomic.Int64 // sockets this loop closed (read by the TIME_WAIT sampler)

	NextScan  int64             // when the driver next looks for requests past their timeout
	ScanEvery int64             // how often (Spec.ScanEvery)
	acct      run.ThreadAccount // this loop's thread: CPU, run-queue wait, its CPU's softirq and steal
	liveAt    run.AccountSample // observers: the account's sample at the last second's end

	// Batched pacing (open loop with a pacing tolerance): the loop wakes
	// once a pacing tick, sends what is due, then collects every response
	// at once (see the pollers). A response read late keeps its true
	// completion time: the kernel's receive timestamp of its last segment
	// (rx on epoll, the ring's own on io_uring), converted to the run's
	// clock (wallOff).
	batch     bool
	rx        rawio.RxReader
	wallOff   int64 // wall clock minus the run's clock, ns, at the last poll
	Unsettled int   // connections connecting, in their handshake or with bytes to write: they need prompt events

	newPoller func(*Loop) (poller, error) // makes poll on the loop's thread (Config.IO: epoll or io_uring)
	nslots    int                         // connection slots (sizes the ring)

	// Slots whose reads stopped at ReadBudget with bytes left (an edge-
	// triggered poller tells of them no more): their events are handed
	// to the driver again at the next wait, after the others'.
	later, laterNow []*Slot

	proto Proto // the protocol's slots (the driver that embeds the loop)
}

// loop is the loop itself, for the engine (loopOf): the drivers embed it.
func (l *Loop) loop() *Loop { return l }

// Setup pins the thread, enters the network namespace and makes the
// loop's poller.
func (l *Loop) Setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.LC.CPU); err != nil {
		return err
	}
	// Sub-millisecond pacing: no timer slack on this thread.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if err := l.LC.R.EnterNetns(); err != nil {
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
	l.Buf = make([]byte, readBufSize)
	l.later = make([]*Slot, 0, l.nslots)
	l.laterNow = make([]*Slot, 0, l.nslots)
	l.acct.Init(l.LC.CPU)
	return nil
}

// CloseFds closes the loop's own descriptors (its connections are the
// driver's to close first).
func (l *Loop) CloseFds() {
	if l.poll != nil {
		l.poll.close()
	}
	if l.wakefd >= 0 {
		unix.Close(l.wakefd)
	}
}

// Lock, Unlock and Finish do nothing: nothing in the loop is shared.
func (l *Loop) Lock()   {}
func (l *Loop) Unlock() {}
func (l *Loop) Finish() {}

// AccountBegin and AccountEnd bound the measured window of the thread's
// CPU account.
func (l *Loop) AccountBegin() { l.acct.Begin() }
func (l *Loop) AccountEnd()   { l.acct.End() }

// OpenConns counts the loop's slots that have a socket.
func (l *Loop) OpenConns() int {
	n := 0
	for i := 0; i < l.nslots; i++ {
		if l.proto.SlotOpen(int32(i)) {
			n++
		}
	}
	return n
}

// LiveShare is the loop thread's account since the previous call (the
// first call: none yet). On the loop's thread.
func (l *Loop) LiveShare() (result.LiveCPU, bool) {
	s := l.acct.Sample()
	prev := l.liveAt
	l.liveAt = s
	if prev.IsZero() {
		return result.LiveCPU{}, false
	}
	busy, starved, idle := run.ShareBetween(prev, s).Split()
	return result.LiveCPU{CPU: l.LC.CPU, Busy: busy, Starved: starved, Idle: idle}, true
}

// Wake interrupts the loop's wait (safe from any goroutine).
func (l *Loop) Wake() {
	one := [8]byte{1}
	unix.Write(l.wakefd, one[:])
}

// Handler is the driver's side of the events: one connection slot's event
// (epoll's bits: the ring's completions say the same), tagged with the
// slot's index and socket generation.
type Handler interface {
	Event(idx, gen int32, ev uint32)
	// Quiet reports whether batched pacing may sleep through socket
	// events: nothing waits in the pending queue for a connection, and no
	// connection needs prompt events.
	Quiet() bool
}

// WaitEvents sleeps until until at the latest (or the next timeout scan)
// and hands every event that arrives to h (the poller's wait). When reads
// stopped at their budget it does not sleep: it takes the events already
// in, then has the stopped slots read on.
func (l *Loop) WaitEvents(now, until int64, h Handler) {
	if len(l.later) == 0 {
		l.poll.wait(now, until, h)
		return
	}
	l.later, l.laterNow = l.laterNow[:0], l.later
	l.poll.wait(now, now, h)
	for _, ss := range l.laterNow {
		ss.later = false
		if ss.Fd >= 0 && ss.laterGen == ss.Gen {
			h.Event(ss.Idx, ss.Gen, ss.laterEv|unix.EPOLLIN)
		}
	}
}

// ReadLater notes that ss's read stopped at ReadBudget with bytes left: ev
// (the event that began it) is handed to the driver again at the loop's
// next wait.
func (l *Loop) ReadLater(ss *Slot, ev uint32) {
	ev &= unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	if ss.later {
		if ss.laterGen != ss.Gen {
			ss.laterGen, ss.laterEv = ss.Gen, ev
		} else {
			ss.laterEv |= ev
		}
		return
	}
	ss.later, ss.laterGen, ss.laterEv = true, ss.Gen, ev
	l.later = append(l.later, ss)
}

// DoneAt returns when the response just read completed, on the run's
// clock: with batched pacing the receive timestamp of its last segment
// (never after now nor before the request was written), else now.
func (l *Loop) DoneAt(now, written int64) int64 {
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
func (l *Loop) dial(ss *Slot) (fd int, connected bool, class run.ErrorClass, err error) {
	fd, err = unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, false, run.Classify(err), err
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
			return fd, false, run.Classify(err), err
		}
	}
	connected, class, err = l.poll.connect(ss, fd)
	return fd, connected, class, err
}

// closeSocket closes ss's socket and releases its stream. With CloseRST
// the kernel resets the connection and keeps no TIME_WAIT on this side.
func (l *Loop) closeSocket(ss *Slot) {
	l.closes.Add(1)
	if ss.S != nil {
		ss.S.Release()
	}
	if l.LC.R.Spec.CloseRST {
		l.linger = unix.Linger{Onoff: 1}
		unix.SetsockoptLinger(ss.Fd, unix.SOL_SOCKET, unix.SO_LINGER, &l.linger)
	}
	l.poll.closeSocket(ss, ss.Fd)
}

// poller is the TCP loop's I/O seam: how a slot's new socket is
// registered and connected, the byte stream a connected socket reads and
// writes through, how it is closed, how the loop sleeps until something
// arrives, and when the response just read arrived. epollPoller (epoll.go)
// and uringPoller (uring.go) implement it; the loop and the protocols
// never ask which one they have. Not safe for concurrent use:
// only the loop's thread calls it.
type poller interface {
	// connect registers fd, ss's new socket (bound, not yet connected),
	// and starts connecting it to the target: connected reports a connect
	// that completed at once, else an event says when it does.
	connect(ss *Slot, fd int) (connected bool, class run.ErrorClass, err error)
	// connectResult is the outcome of ss's connect in progress, once an
	// event said it ended.
	connectResult(ss *Slot) error
	// stream is the byte stream of ss's connected socket: TLS over it for
	// https://, else the socket itself.
	stream(ss *Slot) sock.Stream
	// closeSocket closes ss's socket fd, after what was queued for it.
	closeSocket(ss *Slot, fd int)
	// wait sleeps until until (ns on the run's clock) at the latest, or
	// the next timeout scan, and hands every event that arrives to h.
	// Batched pacing: if h.Quiet() once the events already in are handled,
	// it sleeps through socket events until the deadline.
	wait(now, until int64, h Handler)
	// arrival is when the bytes just read arrived, the kernel's receive
	// timestamp on the wall clock, ns (batched pacing; 0: not known).
	arrival() int64
	// close releases the poller's descriptors (the slots' sockets are
	// closed before).
	close()
}

// Slot is the socket part of a connection slot, the same for every
// engine on the TCP loop: the descriptor (closed and reopened many times:
// new connection per request, Connection: close or GOAWAY, errors) with a
// generation that tells events of an old socket from the current one, the
// byte stream, the connect and setup phases, and whether the loop counts
// the slot as needing prompt events. The protocol's slot embeds it.
type Slot struct {
	Idx, Gen   int32 // the slot's index in the protocol's list; its socket's generation
	Fd         int   // -1: no socket
	Connecting bool
	Handshake  bool // the stream's setup (TLS handshake) in progress
	Unsettled  bool // counted in the loop's Unsettled (see TrackSlot)
	connStart  int64
	openedFor  int64 // intended time of the request that opened the socket: its handshake counts in that request's window

	S     sock.Stream // the byte stream of the current socket (nil when closed)
	plain sock.Plain  // S when the target is plain TCP

	later    bool   // in the loop's later list (ReadLater)
	laterGen int32  // the socket whose read stopped at the budget
	laterEv  uint32 // the event its read began with
}

// Proto is a protocol's part of the one setup of a connection slot
// (HTTP/1.1 and HTTP/2 alike): the loop runs connect, then the TCP
// connection up, then the stream's setup (a TLS handshake; nothing for a
// plain socket), and tells the protocol at each edge. Slots are named by
// their index in the protocol's list.
type Proto interface {
	// SlotTrack keeps slot idx in the loop's count of slots that need
	// prompt events (TrackSlot, with what the protocol has to write).
	SlotTrack(idx int32)
	// SlotFailed ends slot idx's socket, whose connect or setup failed.
	SlotFailed(idx int32, class run.ErrorClass, err error, now int64)
	// SlotOpened says slot idx's TCP connection is up; its stream's setup
	// starts next.
	SlotOpened(idx int32)
	// SlotReady says slot idx's stream is set up: the protocol's bytes may
	// go.
	SlotReady(idx int32, now int64)
	// SlotClose closes slot idx's socket (teardown: it has one).
	SlotClose(idx int32)
	// SlotBegin starts slot idx's first request (closed loop).
	SlotBegin(idx int32, now int64)
	// SlotOpen reports whether slot idx has a socket.
	SlotOpen(idx int32) bool
}

// loopOf is the loop under lc's driver (every driver of a raw-socket
// engine embeds a Loop). The run's one list of loops (Run.Loops) is the
// only one; the engine reads its loops from there.
func loopOf(lc *run.Lifecycle) *Loop { return lc.D.(interface{ loop() *Loop }).loop() }

// Stats: each loop's thread is pinned to its own CPU, so its account is
// its CPU's.
func (e *Engine) Stats(s *run.Stats) {
	s.Gen.IO, s.Gen.IONote = e.IO, e.IONote
	for _, lc := range e.R.Loops {
		s.Shares = append(s.Shares, loopOf(lc).acct.Share())
	}
}

// Closes counts the sockets the loops closed so far.
func (e *Engine) Closes() int64 {
	var n int64
	for _, lc := range e.R.Loops {
		n += loopOf(lc).closes.Load()
	}
	return n
}
