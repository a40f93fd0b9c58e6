package gen

// h1Loop is one HTTP/1.1 event loop (the engine's driver): the TCP loop and
// the connections it owns (h1conn.go), one request at a time each.
type h1Loop struct {
	tcpLoop
	e *h1Engine

	slots []h1Conn
	idles []int32
	busy  int // requests in flight
}

// newLoop builds loop lc of e with n connections.
func newLoop(e *h1Engine, lc *lifecycle, n int) *h1Loop {
	cfg := e.r.cfg
	l := &h1Loop{e: e}
	l.initLoop(lc, &e.tcpEngine, l, n)
	l.slots = make([]h1Conn, n)
	l.idles = make([]int32, 0, n)
	for j := range l.slots {
		l.slots[j].init(j, cfg.VerifySHA256 != nil, e.head[0])
		if l.lc.open {
			l.idles = append(l.idles, int32(j))
		}
	}
	return l
}

func (l *h1Loop) inflight() int { return l.busy }

// idle pops a free connection.
func (l *h1Loop) idle() (int, bool) {
	i, ok := popLast(&l.idles)
	return int(i), ok
}

func (l *h1Loop) send(c int, intended int64, tgt int32, now int64) {
	l.dispatch(&l.slots[c], intended, tgt, now)
}

// tick fails requests past their timeout and restarts closed-loop
// connections whose reconnect backoff has passed, every scanEvery.
func (l *h1Loop) tick(now int64) {
	if now >= l.nextScan {
		l.scan(now)
	}
}

// giveUp fails every request in flight as a timeout (the drain is over).
func (l *h1Loop) giveUp(now int64, class ErrorClass, err error) int {
	n := 0
	for i := range l.slots {
		if c := &l.slots[i]; c.busy {
			l.fail(c, class, err, now)
			n++
		}
	}
	return n
}

// wait sleeps until until at the latest and handles the events of the
// loop's connections.
func (l *h1Loop) wait(now, until int64) { l.waitEvents(now, until, l) }

// quiet reports whether batched pacing may sleep through socket events:
// nothing waits in the pending queue for a connection, and no connection is
// connecting, in its handshake or writing.
func (l *h1Loop) quiet() bool { return !l.lc.hasPending() && l.unsettled == 0 }

// event handles an epoll event of connection slot idx.
func (l *h1Loop) event(idx, gen int32, ev uint32) {
	c := &l.slots[idx]
	if c.gen != gen || c.fd < 0 {
		return // stale event of a closed socket
	}
	l.handle(c, ev)
}

// next gives a connection that just finished a request its next request:
// immediately in closed loop, the oldest pending one in open loop.
func (l *h1Loop) next(c *h1Conn, now int64) {
	switch {
	case l.lc.ended || (l.lc.stopping && !l.lc.hasPending()):
		l.idles = append(l.idles, c.idx)
	case !l.lc.open:
		if l.lc.stopping || l.lc.quotaSpent() {
			l.idles = append(l.idles, c.idx)
			return
		}
		if c.retryAt > now {
			return // reconnect backoff: scan() dispatches it
		}
		l.dispatch(c, now, l.lc.closedTarget(), now)
	case l.lc.hasPending():
		due, tgt := l.lc.popPending()
		l.dispatch(c, due, tgt, now)
	default:
		l.idles = append(l.idles, c.idx)
	}
}

// dispatch starts a request on c: connect first if needed, then write. The
// request carries its intended time (the coordinated-omission correction,
// see recorder): in open loop its schedule slot, in closed loop now.
func (l *h1Loop) dispatch(c *h1Conn, intended int64, tgt int32, now int64) {
	c.intended = intended
	c.tgt = tgt
	c.p.NoBody = l.e.head[tgt] // a HEAD response has headers only

	c.started = now // the timeout runs from here, through connect and handshake
	c.busy = true
	c.reused = c.fd >= 0
	c.retried = false
	l.lc.starting(intended, now)
	c.written = 0
	l.busy++
	if c.fd < 0 {
		l.connect(c, now)
		return
	}
	l.writeRequest(c, now)
}

// scan fails requests past their timeout (counted from when work on them
// began: connect, handshake and write included) and restarts closed-loop
// connections whose reconnect backoff has passed.
func (l *h1Loop) scan(now int64) {
	l.nextScan = now + l.scanEvery
	to := int64(l.lc.r.cfg.Timeout)
	for i := range l.slots {
		c := &l.slots[i]
		if c.busy && now-c.started > to {
			l.fail(c, ErrTimeout, errTimeout, now)
			continue
		}
		if !l.lc.open && !l.lc.stopping && !c.busy && c.retryAt != 0 && c.retryAt <= now && !l.lc.quotaSpent() {
			c.retryAt = 0
			l.dispatch(c, now, l.lc.closedTarget(), now)
		}
	}
}
