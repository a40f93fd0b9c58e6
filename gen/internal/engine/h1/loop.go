package h1

import (
	"hash"

	wire "github.com/loadlab/loadlab/gen/h1"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
)

// loop is one HTTP/1.1 event loop (the engine's driver): the TCP loop and
// the connections it owns (conn.go), one request at a time each.
type loop struct {
	tcploop.Loop
	e *engine

	slots []conn
	idles []int32
	busy  int // requests in flight
}

// NewDriver builds loop lc of e with n connections.
func (e *engine) NewDriver(lc *run.Lifecycle, n int) (run.Driver, error) {
	cfg := e.R.Spec
	l := &loop{e: e}
	l.Init(lc, &e.Engine, l, n)
	l.slots = make([]conn, n)
	l.idles = make([]int32, 0, n)
	for j := range l.slots {
		l.slots[j].init(j, cfg.VerifySHA256 != nil, e.head[0])
		if l.LC.Open {
			l.idles = append(l.idles, int32(j))
		}
	}
	return l, nil
}

// conn is one HTTP/1.1 connection slot of a loop. Its socket may be closed
// and reopened many times (new connection per request, Connection: close,
// errors); gen tells events of an old socket from the current one. Its byte
// stream is s: the plain socket, or TLS over it (see package sock).
type conn struct {
	tcploop.Slot
	busy bool // a request is in progress (connecting, writing or reading)

	writing bool
	wrOff   int

	intended int64 // when the request was due
	tgt      int32 // its target (Config.Targets; 0 with one)
	started  int64 // when work on the request began (timeout reference)
	written  int64 // when its first byte was written
	retryAt  int64 // closed loop: reconnect not before this time
	reused   bool  // the request went out on a kept-alive connection
	retried  bool  // it was already resent once (see retryable)

	p    wire.Parser
	sum  hash.Hash // body digest when verifying
	reqs int       // requests completed on the current socket
}

// Inflight counts the requests in flight.
func (l *loop) Inflight() int { return l.busy }

// Idle pops a free connection.
func (l *loop) Idle() (int, bool) {
	i, ok := run.PopLast(&l.idles)
	return int(i), ok
}

// Send starts a request on connection c.
func (l *loop) Send(c int, intended int64, tgt int32, now int64) {
	l.dispatch(&l.slots[c], intended, tgt, now)
}

// Tick fails requests past their timeout and restarts closed-loop
// connections whose reconnect backoff has passed, every ScanEvery.
func (l *loop) Tick(now int64) {
	if now >= l.NextScan {
		l.scan(now)
	}
}

// GiveUp fails every request in flight as class, err (the drain is over,
// or the loop broke down).
func (l *loop) GiveUp(now int64, class run.ErrorClass, err error) int {
	n := 0
	for i := range l.slots {
		if c := &l.slots[i]; c.busy {
			l.fail(c, class, err, now)
			n++
		}
	}
	return n
}

// Wait sleeps until until at the latest and handles the events of the
// loop's connections.
func (l *loop) Wait(now, until int64) { l.WaitEvents(now, until, l) }

// Quiet reports whether batched pacing may sleep through socket events:
// nothing waits in the pending queue for a connection, and no connection is
// connecting, in its handshake or writing.
func (l *loop) Quiet() bool { return !l.LC.HasPending() && l.Unsettled == 0 }

// Event handles an epoll event of connection slot idx.
func (l *loop) Event(idx, gen int32, ev uint32) {
	c := &l.slots[idx]
	if c.Gen != gen || c.Fd < 0 {
		return // stale event of a closed socket
	}
	l.handle(c, ev)
}

// next gives a connection that just finished a request its next request:
// immediately in closed loop, the oldest pending one in open loop.
func (l *loop) next(c *conn, now int64) {
	switch {
	case l.LC.Ended || (l.LC.Stopping && !l.LC.HasPending()):
		l.idles = append(l.idles, c.Idx)
	case !l.LC.Open:
		if l.LC.Stopping || l.LC.QuotaSpent() {
			l.idles = append(l.idles, c.Idx)
			return
		}
		if c.retryAt > now {
			return // reconnect backoff: scan() dispatches it
		}
		l.dispatch(c, now, l.LC.ClosedTarget(), now)
	case l.LC.HasPending():
		due, tgt := l.LC.PopPending()
		l.dispatch(c, due, tgt, now)
	default:
		l.idles = append(l.idles, c.Idx)
	}
}

// dispatch starts a request on c: connect first if needed, then write. The
// request carries its intended time (the coordinated-omission correction,
// see recorder): in open loop its schedule slot, in closed loop now.
func (l *loop) dispatch(c *conn, intended int64, tgt int32, now int64) {
	c.intended = intended
	c.tgt = tgt
	c.p.NoBody = l.e.head[tgt] // a HEAD response has headers only

	c.started = now // the timeout runs from here, through connect and handshake
	c.busy = true
	c.reused = c.Fd >= 0
	c.retried = false
	l.LC.Starting(intended, now)
	c.written = 0
	l.busy++
	if c.Fd < 0 {
		l.connect(c, now)
		return
	}
	l.writeRequest(c, now)
}

// scan fails requests past their timeout (counted from when work on them
// began: connect, handshake and write included) and restarts closed-loop
// connections whose reconnect backoff has passed.
func (l *loop) scan(now int64) {
	l.NextScan = now + l.ScanEvery
	to := int64(l.LC.R.Spec.Timeout)
	for i := range l.slots {
		c := &l.slots[i]
		if c.busy && now-c.started > to {
			l.fail(c, run.ClassTimeout, run.ErrTimeout, now)
			continue
		}
		if !l.LC.Open && !l.LC.Stopping && !c.busy && c.retryAt != 0 && c.retryAt <= now && !l.LC.QuotaSpent() {
			c.retryAt = 0
			l.dispatch(c, now, l.LC.ClosedTarget(), now)
		}
	}
}
