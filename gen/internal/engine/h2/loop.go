package h2

import (
	"crypto/sha256"
	"errors"
	"hash"

	"golang.org/x/net/http2"

	wire "github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
)

// loop is one HTTP/2 event loop (the engine's driver): the TCP loop and
// its connection slots (conn.go), each carrying up to Streams requests at
// once on one wire.Conn.
//
// The lifecycle's requests are the same as HTTP/1.1's; what changes is
// where one can go. A slot can take a request when it has no socket (it
// connects, and its first stream goes out with the preface) or when its
// Conn has a free stream (Free: the run's streams, lowered by the server's
// SETTINGS_MAX_CONCURRENT_STREAMS, 1 until the server's SETTINGS arrive).
//
//   - Open loop: a due request takes a free stream on any slot of the loop.
//     The slots that may have one wait in a ring (ready), taken in turn so
//     the load spreads over the connections; otherwise the request waits
//     in the lifecycle's pending queue, with its intended time. A slot
//     whose streams free up takes the pending requests first (offer).
//   - Closed loop: each stream sends its next request, intended now, as
//     soon as its response completes; a slot fills every free stream it
//     has after each read.
//
// Requests the server refused unprocessed (REFUSED_STREAM, or above a
// GOAWAY's last stream id) go back to the head of the pending queue with
// their intended time, in both modes (closed loop has a queue for them
// too), and are sent again before anything new. Requests started in one
// pass (an admit, a read) leave together: the slot's bytes are flushed
// once, after the pass.
type loop struct {
	tcploop.Loop
	e *engine

	slots   []conn
	streams int      // per slot
	ready   run.Ring // open loop: slots that may take a request, each at most once
	dirty   []int32  // slots with requests started since their last flush
	busy    int      // requests in flight (on a stream)
	readAt  int64    // when the bytes being fed were read
	doneTs  int64    // when they arrived: readAt, or with batched pacing the receive timestamp of their last segment
	newConn bool
	h2c     *counters // the engine keeps them for its Stats
}

// NewDriver builds loop lc of e with n connection slots.
func (e *engine) NewDriver(lc *run.Lifecycle, n int) (run.Driver, error) {
	cfg := e.R.Spec
	l := &loop{e: e, streams: e.streams, newConn: cfg.NewConn, h2c: &counters{}}
	e.loops = append(e.loops, l.h2c)
	l.Init(lc, &e.Engine, l, n)
	if !l.LC.Open {
		// Closed loop has no schedule to queue, but refused requests
		// wait here to be sent again; there are never more of them than
		// streams.
		l.LC.QueueRefused(n * e.streams)
	}
	l.slots = make([]conn, n)
	l.ready = run.NewRing(n)
	l.dirty = make([]int32, 0, n)
	for j := range l.slots {
		c := &l.slots[j]
		c.l, c.Idx, c.Fd = l, int32(j), -1
		conn, err := wire.NewConn(wire.Config{MaxStreams: e.streams}, e.tmpls[0], c)
		if err != nil {
			return nil, err
		}
		c.c = conn
		c.reqs = make([]req, e.streams)
		c.unsent = make([]int32, 0, e.streams)
		if cfg.VerifySHA256 != nil {
			for i := range c.reqs {
				c.reqs[i].sum = sha256.New()
			}
		}
		if l.LC.Open {
			l.ready.Push(c.Idx)
			c.queued = true
		}
	}
	return l, nil
}

// conn is one HTTP/2 connection slot of a loop. Its socket may be closed
// and reopened many times (GOAWAY, errors, a new connection per request);
// gen tells events of an old socket from the current one. Its byte stream
// is s (plain for h2c, TLS with ALPN h2 for https://, as HTTP/1.1's); its
// Conn c speaks the protocol and reports each stream's response to the
// slot, its Handler, which records it. reqs holds the state of the request
// on each of c's stream slots.
//
// Invariant: without a socket (fd < 0) c is fresh (Reset: no busy stream,
// the preface queued for the next socket).
type conn struct {
	tcploop.Slot
	l      *loop
	queued bool // in the loop's ready ring
	dirty  bool // in the loop's dirty list

	c      *wire.Conn
	reqs   []req   // by c's stream slot
	unsent []int32 // stream slots started whose bytes have not all left yet

	retryAt int64 // closed loop: no new request before this time

	goAway     bool // the server sent GOAWAY on this socket
	goAwayCode http2.ErrCode
	goAwayLast uint32
}

// req is one request on a stream.
type req struct {
	intended int64 // when it was due
	tgt      int32 // its target (Config.Targets; 0 with one)
	started  int64 // when work on it began (timeout reference)
	written  int64 // when its bytes had all left (0 until then)
	status   int
	bytes    int64     // body bytes
	sum      hash.Hash // body digest when verifying
}

var (
	errNoStream   = errors.New("no free HTTP/2 stream for a request the loop gave a stream (a bug: please report it)")
	errH2Closed   = errors.New("the server closed the HTTP/2 connection with the request unanswered")
	errStreamSeen = errors.New("stream error") // stands for a class's message once its first one is kept
)

// Inflight counts the requests in flight.
func (l *loop) Inflight() int { return l.busy }

// Idle returns the next slot of the ready ring that can take a request
// (open loop). Slots that cannot any more leave the ring.
func (l *loop) Idle() (int, bool) {
	for l.ready.Len() > 0 {
		i := l.ready.Front()
		c := &l.slots[i]
		if l.canStart(c, 0) {
			return int(i), true
		}
		l.ready.Pop()
		c.queued = false
	}
	return 0, false
}

// Send starts a request on slot i (which idle returned: the ring's front)
// and moves the slot to the back of the ring if it can take more.
func (l *loop) Send(i int, intended int64, tgt int32, now int64) {
	c := &l.slots[i]
	l.start(c, intended, tgt, now)
	if l.ready.Len() > 0 && l.ready.Front() == int32(i) {
		l.ready.Pop()
		c.queued = false
	}
	l.enqueueReady(c)
	l.markDirty(c)
}

// Tick fails requests past their timeout and restarts closed-loop slots
// whose backoff has passed, every ScanEvery.
func (l *loop) Tick(now int64) {
	if now >= l.NextScan {
		l.scan(now)
	}
}

// GiveUp fails every request in flight as class, err (the drain is over,
// or the loop broke down).
func (l *loop) GiveUp(now int64, class run.ErrorClass, err error) int {
	n := 0
	for j := range l.slots {
		c := &l.slots[j]
		for i := range c.reqs {
			if c.c.Busy(i) {
				c.c.Cancel(i)
				l.LC.Rec.Fail(c.reqs[i].tgt, class, err, c.reqs[i].intended, now)
				n++
			}
		}
	}
	l.busy = 0
	return n
}

// Wait flushes what the last pass started, then sleeps until until at the
// latest and handles the events of the loop's slots.
func (l *loop) Wait(now, until int64) {
	l.flushDirty()
	l.WaitEvents(now, until, l)
}

// Quiet reports whether batched pacing may sleep through socket events:
// nothing waits in the pending queue for a stream, and no slot is
// connecting, in its handshake or has bytes to write.
func (l *loop) Quiet() bool { return !l.LC.HasPending() && l.Unsettled == 0 }

// track keeps the loop's count of slots that need prompt events
// (connecting, in the handshake, or with bytes still to write).
func (l *loop) track(c *conn) { l.TrackSlot(&c.Slot, len(c.c.Pending()) > 0) }

// Event handles an epoll event of slot idx.
func (l *loop) Event(idx, gen int32, ev uint32) {
	c := &l.slots[idx]
	if c.Gen != gen || c.Fd < 0 {
		return // stale event of a closed socket
	}
	l.handle(c, ev)
}

// canStart reports whether c can take a request now: it has no socket
// (and, in closed loop, no backoff pending), or a free stream.
func (l *loop) canStart(c *conn, now int64) bool {
	switch {
	case l.LC.Ended:
		return false
	case !l.LC.Open && c.retryAt > now:
		return false
	case c.Fd < 0:
		return true
	}
	return c.c.Free() > 0
}

// offer gives c's free streams work: the pending queue's requests first
// (open loop's due ones, and refused ones in both modes), then in closed
// loop new requests intended now. In open loop a slot that can still take
// more joins the ready ring.
func (l *loop) offer(c *conn, now int64) {
	for l.canStart(c, now) {
		var ok bool
		switch {
		case l.LC.HasPending():
			due, tgt := l.LC.PopPending()
			ok = l.start(c, due, tgt, now)
		case !l.LC.Open && !l.LC.Stopping && !l.LC.QuotaSpent():
			ok = l.start(c, now, l.LC.ClosedTarget(), now)
		default:
			l.enqueueReady(c)
			return
		}
		if !ok {
			return
		}
	}
}

// enqueueReady puts c in the ready ring (open loop) if it can take a
// request and is not there yet.
func (l *loop) enqueueReady(c *conn) {
	if l.LC.Open && !c.queued && l.canStart(c, 0) {
		l.ready.Push(c.Idx)
		c.queued = true
	}
}

// start sends a request intended at intended on c: it connects first when
// c has no socket. The request's timeout runs from now, through connect
// and handshake. A connect that fails at once fails the request (and in
// open loop the slot tries again for the next one, as HTTP/1.1 does); start
// reports false only when c had no stream after all, so that its caller
// stops offering it requests.
func (l *loop) start(c *conn, intended int64, tgt int32, now int64) bool {
	l.LC.Starting(intended, now)
	if c.Fd < 0 {
		c.goAway = false
		if class, err := l.ConnectSlot(&c.Slot, intended, now); err != nil {
			l.LC.Rec.Fail(tgt, class, err, intended, now)
			l.closeH2(c)
			l.backoff(c, now)
			return true
		}
	}
	i := c.c.StartWith(l.e.tmpls[tgt])
	if i < 0 {
		// canStart said there was a stream: not reached. Count the
		// request rather than lose it.
		l.LC.Rec.Fail(tgt, run.ClassOther, errNoStream, intended, now)
		return false
	}
	l.busy++
	r := &c.reqs[i]
	r.intended, r.tgt, r.started, r.written, r.status, r.bytes = intended, tgt, now, 0, 0, 0
	c.unsent = append(c.unsent, int32(i))
	return true
}

// backoff keeps a closed-loop slot from starting requests for a moment
// after a failure, so a failing server is not spun on; scan restarts it.
func (l *loop) backoff(c *conn, now int64) {
	if !l.LC.Open {
		c.retryAt = now + l.ScanEvery
	}
}

// markDirty notes that c has requests to flush after this pass.
func (l *loop) markDirty(c *conn) {
	if !c.dirty {
		c.dirty = true
		l.dirty = append(l.dirty, c.Idx)
	}
}

// flushDirty writes what the slots marked dirty have queued.
func (l *loop) flushDirty() {
	for _, i := range l.dirty {
		c := &l.slots[i]
		c.dirty = false
		l.flush(c)
	}
	l.dirty = l.dirty[:0]
}

// scan fails requests past their timeout (counted from when the request
// was started: connect, handshake and write included) and restarts
// closed-loop slots whose backoff has passed. A request that times out on
// an established connection is cancelled (RST_STREAM CANCEL) and the
// connection lives on; one still waiting for its connection takes the
// connection down with it (it is the only one: one stream until the
// server's SETTINGS).
func (l *loop) scan(now int64) {
	l.NextScan = now + l.ScanEvery
	to := int64(l.LC.R.Spec.Timeout)
	for j := range l.slots {
		c := &l.slots[j]
		if c.Fd >= 0 && c.c.Active() > 0 {
			if c.Connecting || c.Handshake {
				for i := range c.reqs {
					if c.c.Busy(i) && now-c.reqs[i].started > to {
						l.failConn(c, run.ClassTimeout, run.ErrTimeout, now)
						break
					}
				}
			} else {
				cancelled := false
				for i := range c.reqs {
					if c.c.Busy(i) && now-c.reqs[i].started > to {
						c.c.Cancel(i)
						l.busy--
						l.LC.Rec.Fail(c.reqs[i].tgt, run.ClassTimeout, run.ErrTimeout, c.reqs[i].intended, now)
						cancelled = true
					}
				}
				if cancelled {
					l.backoff(c, now)
					l.afterStreams(c, now)
				}
			}
		}
		if !l.LC.Open && c.retryAt != 0 && c.retryAt <= now {
			c.retryAt = 0
			l.offer(c, now)
			l.markDirty(c)
		}
	}
}
