package gen

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadlab/loadlab/pin"
	"github.com/quic-go/quic-go"
	"golang.org/x/sys/unix"
)

// h3Loop is one HTTP/3 loop: a goroutine locked to a thread pinned to one
// CPU that keeps the open-loop schedule, the pending queue and the
// per-second reports of its connections. The connections' workers record
// into its recorder under mu.
type h3Loop struct {
	id  int
	cpu int
	e   *h3Engine
	r   *run

	timer   *os.File        // timerfd, read through the netpoller
	timerfd int             // its descriptor, for timerfd_settime
	woken   atomic.Bool     // wake was called since the loop last looked
	ctx     context.Context // cancelled when the loop ends: aborts dials and idle workers
	cancel  context.CancelFunc
	backoff time.Duration // closed loop: pause after a failed request
	workers sync.WaitGroup

	mu       sync.Mutex // guards rec and the fields up to ended
	rec      *recorder
	conns    []*h3Conn
	idle     []*h3Conn // open loop: workers waiting for a request
	inflight int
	stopping bool // no new requests (pending ones still go out)
	ended    bool // drain over: what was still owed is counted as timeouts; later results are not counted

	// Loop goroutine only.
	// schedule: pending, started and quota are guarded by mu.
	schedule
	stopBegun  bool
	stopWall   int64
	drainEnd   int64
	nextSecond int64
	secIdx     int
	warmupSeen bool
	its        unix.ItimerSpec
	tbuf       [8]byte
}

// now returns nanoseconds since the run start (monotonic clock).
func (l *h3Loop) now() int64 { return int64(time.Since(l.r.start)) }

// main runs the loop on the calling goroutine, locked to a thread pinned
// to l.cpu. It returns when the run has ended and every worker has left.
func (l *h3Loop) main() {
	defer l.r.loopsDone.Done()
	if err := l.setup(); err != nil {
		l.r.fail(err)
		for _, c := range l.conns {
			c.closeAll()
		}
		return
	}
	defer l.timer.Close()
	for _, c := range l.conns {
		l.workers.Add(1)
		go c.run()
	}
	l.r.ready.Done()
	<-l.r.go_
	if l.e.abort.Load() {
		l.mu.Lock()
		l.stopping, l.ended = true, true
		l.mu.Unlock()
		l.cancel()
		l.workers.Wait()
		return
	}
	for {
		now := l.now()
		l.mu.Lock()
		spent := l.quotaSpent()
		l.mu.Unlock()
		if !l.stopBegun && (now >= l.stopAt || l.r.stopped.Load() || spent) {
			l.beginStop(now)
		}
		if l.stopBegun {
			l.mu.Lock()
			done := l.inflight == 0 && l.pending.len() == 0
			l.mu.Unlock()
			if done {
				break
			}
			if now >= l.drainEnd {
				l.abandon(now)
				break
			}
		}
		if !l.warmupSeen && now >= l.r.warmup {
			l.warmupSeen = true
			if l.id == 0 {
				l.e.acct.begin()
			}
		}
		if l.open && !l.stopBegun {
			l.admit(now)
		}
		if now >= l.nextSecond {
			l.flushSecond(int64(time.Second))
		}
		l.sleep(l.wakeIn(now))
	}
	l.finish()
}

// setup pins the loop's thread and creates its timerfd.
func (l *h3Loop) setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.cpu); err != nil {
		return err
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("timerfd_create: %w", err)
	}
	l.timerfd = fd
	l.timer = os.NewFile(uintptr(fd), "timerfd") // non-blocking: Go's netpoller waits on it
	return nil
}

// arm sets the timerfd to fire in ns nanoseconds (at least 1: zero would
// disarm it).
func (l *h3Loop) arm(ns int64) {
	l.its.Value = unix.NsecToTimespec(max(ns, 1))
	unix.TimerfdSettime(l.timerfd, 0, &l.its, nil)
}

// wake interrupts the loop's sleep (safe from any goroutine).
func (l *h3Loop) wake() {
	l.woken.Store(true)
	var its unix.ItimerSpec
	its.Value.Nsec = 1
	unix.TimerfdSettime(l.timerfd, 0, &its, nil)
}

// sleep parks the loop goroutine for at most ns nanoseconds, or until wake.
// The timerfd read parks through the netpoller, which frees this thread's
// P for the workers meanwhile.
func (l *h3Loop) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	l.arm(ns)
	if l.woken.Swap(false) {
		return // a wake may have been overwritten by arm
	}
	l.timer.Read(l.tbuf[:])
}

// wakeIn returns how long the loop may sleep: until the next intended send,
// second boundary, warmup end, stop or drain end, whichever is first.
func (l *h3Loop) wakeIn(now int64) int64 {
	next := l.nextSecond
	if l.stopBegun {
		next = min(next, l.drainEnd)
	} else {
		next = min(next, l.stopAt)
		if l.open {
			next = min(next, l.nextDue)
		}
	}
	if !l.warmupSeen {
		next = min(next, l.r.warmup)
	}
	return next - now
}

// admit hands every request whose intended time has come to an idle
// connection, or queues it when all are busy (evicting the longest-waiting
// one when the queue is full). Like the HTTP/1.1 loop, it first records how
// late this wakeup came for the earliest due request.
func (l *h3Loop) admit(now int64) {
	l.mu.Lock()
	if l.due(now) {
		l.rec.wokeLate(now, l.nextDue)
	}
	for l.due(now) {
		due := l.take()
		if l.pending.len() == 0 && len(l.idle) > 0 {
			c := l.idle[len(l.idle)-1]
			l.idle = l.idle[:len(l.idle)-1]
			l.assign(c, due)
			c.work <- h3Job{intended: due} // c was idle: its channel is empty
			now = l.now()
			continue
		}
		l.enqueue(l.rec, due, now)
	}
	l.mu.Unlock()
}

// assign marks c busy with the request intended at due. Called under mu.
func (l *h3Loop) assign(c *h3Conn, due int64) {
	l.inflight++
	l.started++
	c.busy, c.intended = true, due
}

// abandon ends the drain: every request still in flight or pending is
// given up as a timeout now, and results arriving later are not counted.
func (l *h3Loop) abandon(now int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		if c.busy {
			c.busy = false
			l.inflight--
			l.rec.failure(ErrTimeout, errDrained, c.intended, now)
			l.r.unfinished.Add(1)
		}
	}
	l.r.unfinished.Add(l.abandonPending(l.rec, now))
	l.ended = true
}

// beginStop stops admitting requests; the ones in flight or queued get
// until the drain end (the timeout, or 1 s when interrupted).
func (l *h3Loop) beginStop(now int64) {
	if l.open {
		l.admit(now) // requests due before the stop are still sent
	}
	l.mu.Lock()
	l.stopping = true
	l.rec.windowEnd = min(now, l.stopAt)
	l.mu.Unlock()
	l.stopBegun = true
	l.stopWall = now
	if l.id == 0 {
		if !l.warmupSeen {
			l.warmupSeen = true // interrupted during the warmup: an empty window
			l.e.acct.begin()
		}
		l.e.acct.end()
	}
	drain := int64(l.r.cfg.Timeout)
	if l.r.stopped.Load() && drain > int64(time.Second) {
		drain = int64(time.Second)
	}
	l.drainEnd = now + drain
}

// flushSecond hands this second's tallies and interval histogram to the
// aggregator; dur is how much of the second the loop covered.
func (l *h3Loop) flushSecond(dur int64) {
	l.mu.Lock()
	rep := secondReport{loop: l.id, t: l.secIdx, counts: l.rec.sec, hist: l.rec.interval, dur: dur}
	select {
	case h := <-l.r.histPool:
		l.rec.interval = h
	default:
		l.rec.interval = l.r.newHist()
	}
	l.rec.sec = secondCounts{}
	l.mu.Unlock()
	l.r.reports <- rep
	l.secIdx++
	l.nextSecond += int64(time.Second)
}

// finish ends the loop: the connections are closed (which ends their
// requests at once: the drain is over, their outcomes are already counted),
// the workers leave and the last partial second is reported.
func (l *h3Loop) finish() {
	l.mu.Lock()
	l.ended = true
	open := make([]*quic.Conn, 0, len(l.conns))
	for _, c := range l.conns {
		if c.qc != nil {
			open = append(open, c.qc)
		}
	}
	l.mu.Unlock()
	l.cancel()
	for _, qc := range open {
		qc.CloseWithError(0, "")
	}
	l.workers.Wait()
	l.flushSecond(l.now() - (l.nextSecond - int64(time.Second)))
}

// settle records the outcome of c's request (unless the loop has ended)
// and says what c does next: in open loop it takes the oldest pending
// request, if any. Called by c's worker.
func (l *h3Loop) settle(c *h3Conn) (next h3Job, more bool) {
	o := &c.out
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || !c.busy {
		return h3Job{}, false
	}
	c.busy = false
	l.inflight--
	rec := l.rec
	measured := rec.owed(o.intended)
	if measured && o.started-o.intended > lateThreshold {
		rec.lateSends++
	}
	if measured && o.retried {
		rec.retries++
	}
	if o.handshake && measured {
		rec.handshakes++
		record(rec.handshake, o.handshakeNs/1000)
		if o.resumed {
			rec.resumed++
		}
	}
	if o.zeroRTT && measured {
		rec.zeroRTT++
	}
	if o.err != nil {
		rec.failure(o.class, o.err, o.intended, o.failed)
	} else {
		rec.response(o.status, o.intended, o.written, o.done, o.bytes)
	}
	if l.open && l.pending.len() > 0 {
		due := l.pending.pop()
		l.assign(c, due)
		return h3Job{intended: due}, true
	}
	if l.open {
		l.idle = append(l.idle, c)
	}
	if l.stopping && l.inflight == 0 && l.pending.len() == 0 {
		l.wake()
	}
	return h3Job{}, false
}

// startClosed reserves the next closed-loop request for c's worker, intended
// now, or reports that the loop is stopping.
func (l *h3Loop) startClosed(c *h3Conn) (h3Job, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping || l.quotaSpent() {
		return h3Job{}, false
	}
	due := l.now()
	l.assign(c, due)
	return h3Job{intended: due}, true
}

// setConn publishes c's new QUIC connection so that finish can close it;
// it reports false (and c must close the connection) when the loop has
// already ended.
func (l *h3Loop) setConn(c *h3Conn, qc *quic.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return false
	}
	c.qc = qc
	return true
}

// clearConn forgets c's QUIC connection.
func (l *h3Loop) clearConn(c *h3Conn) {
	l.mu.Lock()
	c.qc = nil
	l.mu.Unlock()
}
