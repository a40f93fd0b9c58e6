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

// h3Loop is one HTTP/3 loop (the engine's driver): the lifecycle runs on a
// goroutine locked to a thread pinned to one CPU; each connection is a QUIC
// connection driven by a worker goroutine of its own (h3conn.go), which
// settles its requests into the lifecycle under mu.
type h3Loop struct {
	lc *lifecycle // the shared lifecycle: the schedule, the stop and the drain (the driver's seam to it)
	e  *h3Engine

	timer   *os.File        // timerfd, read through the netpoller
	timerfd int             // its descriptor, for timerfd_settime
	woken   atomic.Bool     // wake was called since the loop last looked
	ctx     context.Context // cancelled when the loop ends: aborts dials and idle workers
	cancel  context.CancelFunc
	backoff time.Duration // closed loop: pause after a failed request
	workers sync.WaitGroup

	mu    sync.Mutex // guards the lifecycle's shared state and the fields below
	conns []*h3Conn
	idles []*h3Conn // open loop: workers waiting for a request
	busy  int       // requests in flight

	// Loop goroutine only.
	its  unix.ItimerSpec
	tbuf [8]byte
}

func (l *h3Loop) lock()         { l.mu.Lock() }
func (l *h3Loop) unlock()       { l.mu.Unlock() }
func (l *h3Loop) inflight() int { return l.busy }

// openConns counts the loop's open QUIC connections (under lock).
func (l *h3Loop) openConns() int {
	n := 0
	for _, c := range l.conns {
		if c.qc != nil {
			n++
		}
	}
	return n
}
func (l *h3Loop) tick(int64)  {}
func (l *h3Loop) begin(int64) {} // the workers start their requests themselves

// The process's CPU account covers every loop: loop 0 keeps it.
func (l *h3Loop) accountBegin() {
	if l.lc.id == 0 {
		l.e.acct.begin()
	}
}

func (l *h3Loop) accountEnd() {
	if l.lc.id == 0 {
		l.e.acct.end()
	}
}

// setup pins the loop's thread, creates its timerfd and starts the workers
// (they wait for the run to start).
func (l *h3Loop) setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.lc.cpu); err != nil {
		return err
	}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("timerfd_create: %w", err)
	}
	l.timerfd = fd
	l.timer = os.NewFile(uintptr(fd), "timerfd") // non-blocking: Go's netpoller waits on it
	for _, c := range l.conns {
		l.workers.Add(1)
		go c.worker()
	}
	return nil
}

func (l *h3Loop) teardown() {
	if l.timer != nil {
		l.timer.Close()
	}
	for _, c := range l.conns {
		c.closeAll()
	}
}

// wake interrupts the loop's sleep (safe from any goroutine).
func (l *h3Loop) wake() {
	l.woken.Store(true)
	if l.timerfd <= 0 {
		return
	}
	var its unix.ItimerSpec
	its.Value.Nsec = 1
	unix.TimerfdSettime(l.timerfd, 0, &its, nil)
}

// wait parks the loop goroutine until until, or until wake. The timerfd
// read parks through the netpoller, which frees this thread's P for the
// workers meanwhile (see h3engine.go).
func (l *h3Loop) wait(now, until int64) {
	ns := until - now
	if ns <= 0 {
		return
	}
	l.its.Value = unix.NsecToTimespec(ns)
	unix.TimerfdSettime(l.timerfd, 0, &l.its, nil)
	if l.woken.Swap(false) {
		return // a wake may have been overwritten by the arming
	}
	l.timer.Read(l.tbuf[:]) //nolint:errcheck // drains the timerfd: what it read does not matter
}

// idle pops a worker waiting for a request.
func (l *h3Loop) idle() (int, bool) {
	c, ok := popLast(&l.idles)
	if !ok {
		return 0, false
	}
	return c.idx, true
}

// send hands the request to c's worker (c was idle: its channel is empty).
func (l *h3Loop) send(c int, intended int64, _ int32, _ int64) {
	l.assign(l.conns[c], intended)
	l.conns[c].work <- h3Job{intended: intended}
}

// assign marks c busy with the request intended at due. Called under mu.
func (l *h3Loop) assign(c *h3Conn, due int64) {
	l.busy++
	l.lc.started++
	c.busy, c.intended = true, due
}

// giveUp fails every request in flight as a timeout (the drain is over);
// the workers' late results are not counted.
func (l *h3Loop) giveUp(now int64, class ErrorClass, err error) int {
	n := 0
	for _, c := range l.conns {
		if c.busy {
			c.busy = false
			l.busy--
			l.lc.rec.fail(0, class, err, c.intended, now)
			n++
		}
	}
	return n
}

// finish closes the connections (which ends their requests at once: the
// drain is over, their outcomes are already counted) and waits for the
// workers to leave.
func (l *h3Loop) finish() {
	l.mu.Lock()
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
}

// settle records the outcome of c's request (unless the loop has ended)
// and says what c does next: in open loop it takes the oldest pending
// request, if any. Called by c's worker.
func (l *h3Loop) settle(c *h3Conn) (next h3Job, more bool) {
	o := &c.out
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lc.ended || !c.busy {
		return h3Job{}, false
	}
	c.busy = false
	l.busy--
	rec := l.lc.rec
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
		rec.fail(0, o.class, o.err, o.intended, o.failed)
	} else {
		rec.response(0, o.status, o.intended, o.written, o.done, o.bytes)
	}
	if l.lc.open && l.lc.hasPending() {
		due, _ := l.lc.popPending() // HTTP/3 runs have one target
		l.assign(c, due)
		return h3Job{intended: due}, true
	}
	if l.lc.open {
		l.idles = append(l.idles, c)
	}
	if l.lc.stopping && l.busy == 0 && !l.lc.hasPending() {
		l.wake()
	}
	return h3Job{}, false
}

// startClosed reserves the next closed-loop request for c's worker, intended
// now, or reports that the loop is stopping.
func (l *h3Loop) startClosed(c *h3Conn) (h3Job, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lc.stopping || l.lc.quotaSpent() {
		return h3Job{}, false
	}
	due := l.lc.now()
	l.assign(c, due)
	return h3Job{intended: due}, true
}

// setConn publishes c's new QUIC connection so that finish can close it;
// it reports false (and c must close the connection) when the loop has
// already ended.
func (l *h3Loop) setConn(c *h3Conn, qc *quic.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lc.ended {
		return false
	}
	c.qc = qc
	l.lc.rec.dials++
	return true
}

// clearConn forgets c's QUIC connection.
func (l *h3Loop) clearConn(c *h3Conn) {
	l.mu.Lock()
	c.qc = nil
	l.mu.Unlock()
}
