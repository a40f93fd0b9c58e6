package gen

import (
	"crypto/sha256"

	"github.com/loadlab/loadlab/gen/h2"
)

// h2Loop is one HTTP/2 event loop (the engine's driver): the TCP loop and
// its connection slots (h2conn.go), each carrying up to Streams requests at
// once on one h2.Conn.
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
type h2Loop struct {
	tcpLoop
	e *h2Engine

	slots   []h2Conn
	streams int     // per slot
	ready   ring32  // open loop: slots that may take a request, each at most once
	dirty   []int32 // slots with requests started since their last flush
	busy    int     // requests in flight (on a stream)
	readAt  int64   // when the bytes being fed were read
	doneTs  int64   // when they arrived: readAt, or with batched pacing the receive timestamp of their last segment
	newConn bool
	h2c     h2Counters
}

// h2Counters are what a loop saw of the protocol (see H2Info).
type h2Counters struct {
	goaways       uint64
	refused       uint64
	resetCodes    [h2CodeSlots]uint64
	goawayCodes   [h2CodeSlots]uint64
	serverStreams uint32 // lowest server limit below streams, 0 = none
}

// newH2Loop builds loop lc of e with n connection slots.
func newH2Loop(e *h2Engine, lc *lifecycle, n int) (*h2Loop, error) {
	cfg := e.r.cfg
	l := &h2Loop{e: e, streams: e.streams, newConn: cfg.NewConn}
	l.initLoop(lc, &e.tcpEngine, l, n)
	if !l.lc.open {
		// Closed loop has no schedule to queue, but refused requests
		// wait here to be sent again; there are never more of them than
		// streams.
		l.lc.pending = newPendingRing(n*e.streams, len(cfg.reqs) > 1)
	}
	l.slots = make([]h2Conn, n)
	l.ready = newRing32(n)
	l.dirty = make([]int32, 0, n)
	for j := range l.slots {
		c := &l.slots[j]
		c.l, c.idx, c.fd = l, int32(j), -1
		conn, err := h2.NewConn(h2.Config{MaxStreams: e.streams}, e.tmpls[0], c)
		if err != nil {
			return nil, err
		}
		c.c = conn
		c.reqs = make([]h2Req, e.streams)
		c.unsent = make([]int32, 0, e.streams)
		if cfg.VerifySHA256 != nil {
			for i := range c.reqs {
				c.reqs[i].sum = sha256.New()
			}
		}
		if l.lc.open {
			l.ready.push(c.idx)
			c.queued = true
		}
	}
	return l, nil
}

func (l *h2Loop) inflight() int { return l.busy }

// idle returns the next slot of the ready ring that can take a request
// (open loop). Slots that cannot any more leave the ring.
func (l *h2Loop) idle() (int, bool) {
	for l.ready.len() > 0 {
		i := l.ready.front()
		c := &l.slots[i]
		if l.canStart(c, 0) {
			return int(i), true
		}
		l.ready.pop()
		c.queued = false
	}
	return 0, false
}

// send starts a request on slot i (which idle returned: the ring's front)
// and moves the slot to the back of the ring if it can take more.
func (l *h2Loop) send(i int, intended int64, tgt int32, now int64) {
	c := &l.slots[i]
	l.start(c, intended, tgt, now)
	if l.ready.len() > 0 && l.ready.front() == int32(i) {
		l.ready.pop()
		c.queued = false
	}
	l.enqueueReady(c)
	l.markDirty(c)
}

// tick fails requests past their timeout and restarts closed-loop slots
// whose backoff has passed, every scanEvery.
func (l *h2Loop) tick(now int64) {
	if now >= l.nextScan {
		l.scan(now)
	}
}

// giveUp fails every request in flight as a timeout (the drain is over).
func (l *h2Loop) giveUp(now int64, class ErrorClass, err error) int {
	n := 0
	for j := range l.slots {
		c := &l.slots[j]
		for i := range c.reqs {
			if c.c.Busy(i) {
				c.c.Cancel(i)
				l.lc.rec.fail(c.reqs[i].tgt, class, err, c.reqs[i].intended, now)
				n++
			}
		}
	}
	l.busy = 0
	return n
}

// wait flushes what the last pass started, then sleeps until until at the
// latest and handles the events of the loop's slots.
func (l *h2Loop) wait(now, until int64) {
	l.flushDirty()
	l.waitEvents(now, until, l)
}

// quiet reports whether batched pacing may sleep through socket events:
// nothing waits in the pending queue for a stream, and no slot is
// connecting, in its handshake or has bytes to write.
func (l *h2Loop) quiet() bool { return !l.lc.hasPending() && l.unsettled == 0 }

// track keeps the loop's count of slots that need prompt events
// (connecting, in the handshake, or with bytes still to write).
func (l *h2Loop) track(c *h2Conn) { l.trackSlot(&c.socketSlot, len(c.c.Pending()) > 0) }

// event handles an epoll event of slot idx.
func (l *h2Loop) event(idx, gen int32, ev uint32) {
	c := &l.slots[idx]
	if c.gen != gen || c.fd < 0 {
		return // stale event of a closed socket
	}
	l.handle(c, ev)
}

// canStart reports whether c can take a request now: it has no socket
// (and, in closed loop, no backoff pending), or a free stream.
func (l *h2Loop) canStart(c *h2Conn, now int64) bool {
	switch {
	case l.lc.ended:
		return false
	case !l.lc.open && c.retryAt > now:
		return false
	case c.fd < 0:
		return true
	}
	return c.c.Free() > 0
}

// offer gives c's free streams work: the pending queue's requests first
// (open loop's due ones, and refused ones in both modes), then in closed
// loop new requests intended now. In open loop a slot that can still take
// more joins the ready ring.
func (l *h2Loop) offer(c *h2Conn, now int64) {
	for l.canStart(c, now) {
		var ok bool
		switch {
		case l.lc.hasPending():
			due, tgt := l.lc.popPending()
			ok = l.start(c, due, tgt, now)
		case !l.lc.open && !l.lc.stopping && !l.lc.quotaSpent():
			ok = l.start(c, now, l.lc.closedTarget(), now)
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
func (l *h2Loop) enqueueReady(c *h2Conn) {
	if l.lc.open && !c.queued && l.canStart(c, 0) {
		l.ready.push(c.idx)
		c.queued = true
	}
}

// start sends a request intended at intended on c: it connects first when
// c has no socket. The request's timeout runs from now, through connect
// and handshake. A connect that fails at once fails the request (and in
// open loop the slot tries again for the next one, as HTTP/1.1 does); start
// reports false only when c had no stream after all, so that its caller
// stops offering it requests.
func (l *h2Loop) start(c *h2Conn, intended int64, tgt int32, now int64) bool {
	l.lc.starting(intended, now)
	if c.fd < 0 {
		c.goAway = false
		if class, err := l.connectSlot(&c.socketSlot, intended, now); err != nil {
			l.lc.rec.fail(tgt, class, err, intended, now)
			l.closeH2(c)
			l.backoff(c, now)
			return true
		}
	}
	i := c.c.StartWith(l.e.tmpls[tgt])
	if i < 0 {
		// canStart said there was a stream: not reached. Count the
		// request rather than lose it.
		l.lc.rec.fail(tgt, ErrOther, errNoStream, intended, now)
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
func (l *h2Loop) backoff(c *h2Conn, now int64) {
	if !l.lc.open {
		c.retryAt = now + l.scanEvery
	}
}

// markDirty notes that c has requests to flush after this pass.
func (l *h2Loop) markDirty(c *h2Conn) {
	if !c.dirty {
		c.dirty = true
		l.dirty = append(l.dirty, c.idx)
	}
}

// flushDirty writes what the slots marked dirty have queued.
func (l *h2Loop) flushDirty() {
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
func (l *h2Loop) scan(now int64) {
	l.nextScan = now + l.scanEvery
	to := int64(l.lc.r.cfg.Timeout)
	for j := range l.slots {
		c := &l.slots[j]
		if c.fd >= 0 && c.c.Active() > 0 {
			if c.connecting || c.handshake {
				for i := range c.reqs {
					if c.c.Busy(i) && now-c.reqs[i].started > to {
						l.failConn(c, ErrTimeout, errTimeout, now)
						break
					}
				}
			} else {
				cancelled := false
				for i := range c.reqs {
					if c.c.Busy(i) && now-c.reqs[i].started > to {
						c.c.Cancel(i)
						l.busy--
						l.lc.rec.fail(c.reqs[i].tgt, ErrTimeout, errTimeout, c.reqs[i].intended, now)
						cancelled = true
					}
				}
				if cancelled {
					l.backoff(c, now)
					l.afterStreams(c, now)
				}
			}
		}
		if !l.lc.open && c.retryAt != 0 && c.retryAt <= now {
			c.retryAt = 0
			l.offer(c, now)
			l.markDirty(c)
		}
	}
}

// ring32 is a fixed-capacity FIFO of slot indexes.
type ring32 struct {
	buf        []int32
	head, size int
}

func newRing32(n int) ring32 { return ring32{buf: make([]int32, max(n, 1))} }

func (r *ring32) len() int     { return r.size }
func (r *ring32) front() int32 { return r.buf[r.head] }
func (r *ring32) push(v int32) { r.buf[(r.head+r.size)%len(r.buf)] = v; r.size++ }
func (r *ring32) pop() (v int32) {
	v = r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}
