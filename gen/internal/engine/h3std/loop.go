package h3std

import (
	"context"
	"crypto/tls"
	"fmt"
	"hash"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/pin"
)

// loop is one HTTP/3 loop (the engine's driver): the lifecycle runs on a
// goroutine locked to a thread pinned to one CPU; each connection is a QUIC
// connection driven by a worker goroutine of its own (h3conn.go), which
// settles its requests into the lifecycle under mu.
type loop struct {
	LC *run.Lifecycle // the shared lifecycle: the schedule, the stop and the drain (the driver's seam to it)
	e  *engine

	timer   *os.File        // timerfd, read through the netpoller
	timerfd int             // its descriptor, for timerfd_settime
	woken   atomic.Bool     // wake was called since the loop last looked
	ctx     context.Context // cancelled when the loop ends: aborts dials and idle workers
	cancel  context.CancelFunc
	backoff time.Duration // closed loop: pause after a failed request
	workers sync.WaitGroup

	mu    sync.Mutex // guards the lifecycle's shared state and the fields below
	conns []*conn
	idles []*conn // open loop: workers waiting for a request
	busy  int     // requests in flight

	// Loop goroutine only.
	its  unix.ItimerSpec
	tbuf [8]byte
}

func (l *loop) Lock()         { l.mu.Lock() }
func (l *loop) Unlock()       { l.mu.Unlock() }
func (l *loop) Inflight() int { return l.busy }

// OpenConns counts the loop's open QUIC connections (under lock).
func (l *loop) OpenConns() int {
	n := 0
	for _, c := range l.conns {
		if c.qc != nil {
			n++
		}
	}
	return n
}
func (l *loop) Tick(int64)  {}
func (l *loop) Begin(int64) {} // the workers start their requests themselves

// The process's CPU account covers every loop: loop 0 keeps it.
func (l *loop) AccountBegin() {
	if l.LC.ID == 0 {
		l.e.acct.Begin()
	}
}

func (l *loop) AccountEnd() {
	if l.LC.ID == 0 {
		l.e.acct.End()
	}
}

// Setup pins the loop's thread, creates its timerfd and starts the workers
// (they wait for the run to start).
func (l *loop) Setup() error {
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	if err := pin.PinThread(l.LC.CPU); err != nil {
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

// Teardown closes the timerfd and the connections.
func (l *loop) Teardown() {
	if l.timer != nil {
		l.timer.Close()
	}
	for _, c := range l.conns {
		c.closeAll()
	}
}

// Wake interrupts the loop's sleep (safe from any goroutine).
func (l *loop) Wake() {
	l.woken.Store(true)
	if l.timerfd <= 0 {
		return
	}
	var its unix.ItimerSpec
	its.Value.Nsec = 1
	unix.TimerfdSettime(l.timerfd, 0, &its, nil)
}

// Wait parks the loop goroutine until until, or until wake. The timerfd
// read parks through the netpoller, which frees this thread's P for the
// workers meanwhile (see h3engine.go).
func (l *loop) Wait(now, until int64) {
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

// Idle pops a worker waiting for a request.
func (l *loop) Idle() (int, bool) {
	c, ok := run.PopLast(&l.idles)
	if !ok {
		return 0, false
	}
	return c.idx, true
}

// Send hands the request to c's worker (c was idle: its channel is empty).
func (l *loop) Send(c int, intended int64, _ int32, _ int64) {
	l.assign(l.conns[c], intended)
	l.conns[c].work <- job{intended: intended}
}

// assign marks c busy with the request intended at due. Called under mu.
func (l *loop) assign(c *conn, due int64) {
	l.busy++
	l.LC.Started++
	c.busy, c.intended = true, due
}

// GiveUp fails every request in flight as a timeout (the drain is over);
// the workers' late results are not counted.
func (l *loop) GiveUp(now int64, class run.ErrorClass, err error) int {
	n := 0
	for _, c := range l.conns {
		if c.busy {
			c.busy = false
			l.busy--
			l.LC.Rec.Fail(0, class, err, c.intended, now)
			n++
		}
	}
	return n
}

// Finish closes the connections (which ends their requests at once: the
// drain is over, their outcomes are already counted) and waits for the
// workers to leave.
func (l *loop) Finish() {
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
func (l *loop) settle(c *conn) (next job, more bool) {
	o := &c.out
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.LC.Ended || !c.busy {
		return job{}, false
	}
	c.busy = false
	l.busy--
	rec := l.LC.Rec
	measured := rec.Owed(o.intended)
	rec.LateSend(o.intended, o.started)
	if measured && o.retried {
		rec.Retries++
	}
	if o.handshake {
		rec.CountHandshake(o.intended, o.handshakeNs, o.resumed)
	}
	if o.zeroRTT && measured {
		rec.ZeroRTT++
	}
	if o.err != nil {
		rec.Fail(0, o.class, o.err, o.intended, o.failed)
	} else {
		rec.Response(0, o.status, o.intended, o.written, o.done, o.bytes)
	}
	if l.LC.Open && l.LC.HasPending() {
		due, _ := l.LC.PopPending() // HTTP/3 runs have one target
		l.assign(c, due)
		return job{intended: due}, true
	}
	if l.LC.Open {
		l.idles = append(l.idles, c)
	}
	if l.LC.Stopping && l.busy == 0 && !l.LC.HasPending() {
		l.Wake()
	}
	return job{}, false
}

// startClosed reserves the next closed-loop request for c's worker, intended
// now, or reports that the loop is stopping.
func (l *loop) startClosed(c *conn) (job, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.LC.Stopping || l.LC.QuotaSpent() {
		return job{}, false
	}
	due := l.LC.Now()
	l.assign(c, due)
	return job{intended: due}, true
}

// setConn publishes c's new QUIC connection so that finish can close it;
// it reports false (and c must close the connection) when the loop has
// already ended.
func (l *loop) setConn(c *conn, qc *quic.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.LC.Ended {
		return false
	}
	c.qc = qc
	l.LC.Rec.Dials++
	return true
}

// clearConn forgets c's QUIC connection.
func (l *loop) clearConn(c *conn) {
	l.mu.Lock()
	c.qc = nil
	l.mu.Unlock()
}

// bufSize is each worker's body read buffer.
const bufSize = 16 << 10

// job is one request handed to a worker: when it was due.
type job struct {
	intended int64
}

// outcome is the outcome of one request, filled by the worker and recorded by
// its loop's settle. Times are ns since the run start.
type outcome struct {
	intended, started, written, done int64
	failed                           int64 // when a failed request was given up
	retried                          bool  // resent once on a new connection (see do)
	status                           int
	bytes                            int64 // body bytes (QPACK-compressed headers are not counted)
	err                              error
	class                            run.ErrorClass
	handshake                        bool  // this request dialed a new QUIC connection
	handshakeNs                      int64 // dial start to handshake done (0-RTT: to early data allowed)
	resumed, zeroRTT                 bool
}

// conn is one connection slot of a loop: a UDP socket with its own
// quic.Transport, the QUIC connection on it (redialled per request with
// NewConn, or when the server closed it) and the worker goroutine that runs
// its requests one at a time.
type conn struct {
	l    *loop
	e    *engine
	idx  int
	work chan job // open loop: the next request (capacity 1)

	udp *net.UDPConn
	tr  *quic.Transport
	tls *tls.Config // the run's, or with TLS.Resume a copy with this slot's own session cache
	qc  *quic.Conn  // set and cleared by the worker under l.mu; finish reads it under l.mu
	cc  *http3.ClientConn

	req *http.Request // shared by the run's workers, read only
	buf []byte
	sum hash.Hash
	out outcome

	// Guarded by l.mu: the request in flight, for the loop to give up
	// when the drain ends.
	busy     bool
	intended int64
}

// NewDriver builds loop lc and its connections' UDP sockets (inside the
// run's network namespace: a socket stays in the namespace it was created
// in, whichever thread uses it later).
func (e *engine) NewDriver(lc *run.Lifecycle, n int) (run.Driver, error) {
	r := e.r
	cfg := r.Spec
	l := &loop{LC: lc, e: e, backoff: time.Duration(cfg.ScanEvery()), timerfd: -1}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	for j := 0; j < n; j++ {
		c := l.newConn(j, e.req, cfg.VerifySHA256 != nil)
		l.conns = append(l.conns, c)
		if l.LC.Open {
			l.idles = append(l.idles, c)
		}
	}
	next := lc.ID * n
	err := r.InNetns(func() error {
		for _, c := range l.conns {
			var src net.IP
			if len(cfg.SrcAddrs) > 0 {
				src = net.IP(cfg.SrcAddrs[next%len(cfg.SrcAddrs)].AsSlice())
				next++
			}
			udp, err := run.ListenUDP(e.dst, src)
			if err != nil {
				return err
			}
			c.udp = udp
			c.tr = &quic.Transport{Conn: udp}
		}
		return nil
	})
	if err != nil {
		l.Teardown()
		return nil, err
	}
	return l, nil
}
