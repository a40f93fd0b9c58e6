package gen

import (
	"crypto/sha256"
	"hash"

	"github.com/loadlab/loadlab/gen/internal/sock"

	"github.com/loadlab/loadlab/gen/h1"
	"golang.org/x/sys/unix"
)

// h1Conn is one HTTP/1.1 connection slot of a loop. Its socket may be closed
// and reopened many times (new connection per request, Connection: close,
// errors); gen tells events of an old socket from the current one. Its byte
// stream is s: the plain socket, or TLS over it (see package sock).
type h1Conn struct {
	socketSlot
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

	p    h1.Parser
	sum  hash.Hash // body digest when verifying
	reqs int       // requests completed on the current socket
}

func (c *h1Conn) init(idx int, verify, head bool) {
	c.idx = int32(idx)
	c.fd = -1
	c.p.NoBody = head // a HEAD response has headers only, whatever its Content-Length
	if verify {
		c.sum = sha256.New()
		c.p.BodySink = c.sum
	}
}

// connect opens a new non-blocking socket for c and starts connecting
// (slot.go runs the setup; the request goes out once it is done).
func (l *h1Loop) connect(c *h1Conn, now int64) {
	if class, err := l.connectSlot(&c.socketSlot, c.intended, now); err != nil {
		l.fail(c, class, err, now)
	}
}

// track keeps c in the loop's count of connections that need prompt events.
func (l *h1Loop) track(c *h1Conn) { l.trackSlot(&c.socketSlot, c.writing) }

// The slot setup's edges (slotProto).
func (l *h1Loop) slotTrack(idx int32) { l.track(&l.slots[idx]) }
func (l *h1Loop) slotFailed(idx int32, class ErrorClass, err error, now int64) {
	l.fail(&l.slots[idx], class, err, now)
}
func (l *h1Loop) slotOpened(idx int32)           { l.slots[idx].reqs = 0 }
func (l *h1Loop) slotReady(idx int32, now int64) { l.writeRequest(&l.slots[idx], now) }
func (l *h1Loop) slotClose(idx int32)            { l.closeConn(&l.slots[idx]) }
func (l *h1Loop) slotOpen(idx int32) bool        { return l.slots[idx].fd >= 0 }
func (l *h1Loop) slotBegin(idx int32, now int64) {
	l.dispatch(&l.slots[idx], now, l.lc.closedTarget(), now)
}

// handle processes the events of c's socket.
func (l *h1Loop) handle(c *h1Conn, ev uint32) {
	now := l.lc.now()
	if l.settingUp(&c.socketSlot, ev, now) {
		return
	}
	switch {
	case !c.busy:
		// Idle keep-alive connection: the server closed it, or sent bytes
		// nobody asked for.
		l.idleEvent(c)
	default:
		if c.writing && ev&unix.EPOLLOUT != 0 {
			l.writeRequest(c, now)
			if c.fd < 0 || c.writing {
				return
			}
		}
		if c.s.Pending() {
			if err := c.s.Flush(); err != nil {
				l.fail(c, classify(err), err, now)
				return
			}
			l.track(c)
		} else if ev&unix.EPOLLOUT != 0 && c.unsettled {
			l.track(c) // io_uring: a send completed and took what waited for it
		}
		if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 && !c.writing {
			l.readResponse(c, ev)
		}
	}
}

// writeRequest writes (the rest of) the serialized request, then what the
// stream still has queued (a TLS handshake's last flight leaves with it).
func (l *h1Loop) writeRequest(c *h1Conn, now int64) {
	req := l.e.reqs[c.tgt]
	if c.wrOff == 0 {
		c.written = now
	}
	n, err := c.s.Write(req[c.wrOff:])
	if n > 0 {
		l.lc.rec.written += uint64(n)
	}
	if sock.NotReady(err) {
		c.writing = true
		l.track(c)
		return
	}
	if err == nil && c.s.Pending() {
		err = c.s.Flush()
	}
	if err != nil {
		l.fail(c, classify(err), err, now)
		return
	}
	c.wrOff += n
	c.writing = c.wrOff < len(req)
	if !c.writing {
		c.wrOff = 0
	}
	l.track(c)
}

// readResponse reads what the stream has, readBudget bytes at most (the
// rest after the loop's other events), and feeds the parser. ev is the
// epoll event that woke the loop.
func (l *h1Loop) readResponse(c *h1Conn, ev uint32) {
	budget := readBudget
	for {
		buf, n, err := l.readFrom(c)
		if err != nil {
			switch {
			case sock.NotReady(err):
				return
			case err == unix.EINTR:
				continue
			}
			l.fail(c, classify(err), err, l.lc.now())
			return
		}
		if n == 0 {
			if done, perr := c.p.EOF(); !done {
				l.fail(c, ErrClosed, perr, l.lc.now())
			} else {
				l.complete(c, true)
			}
			return
		}
		l.lc.reading(buf[:n])
		used, done, perr := c.p.Feed(buf[:n])
		if perr != nil {
			l.fail(c, ErrParse, perr, l.lc.now())
			return
		}
		if done {
			if used < n {
				// Bytes beyond a complete response: the response stands,
				// but nothing was asked for after it (no pipelining), so the
				// connection cannot be trusted for the next one.
				l.lc.rec.unsolicited++
				l.complete(c, true)
				return
			}
			l.complete(c, false)
			return
		}
		// A short read of a plain socket means it is drained and the next
		// edge will wake us; but when the peer's FIN came with the data
		// (one event carries both EPOLLIN and EPOLLRDHUP), no further edge
		// comes: read on to see the EOF, or the response would wait for
		// the timeout.
		if c.s.DrainsOnShortRead() && n < len(buf) && ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			return
		}
		if budget -= n; budget <= 0 {
			l.readLater(&c.socketSlot, ev)
			return
		}
	}
}

// readFrom reads what c's stream has: into the loop's buffer, or the
// stream's own (a plain socket on io_uring lends its received buffer: no
// copy, valid until the loop next waits).
func (l *h1Loop) readFrom(c *h1Conn) ([]byte, int, error) {
	b, err := c.s.View(l.buf)
	return b, len(b), err
}

// complete records a finished response and moves c on.
func (l *h1Loop) complete(c *h1Conn, eof bool) {
	now := l.doneAt(l.lc.now(), c.written)
	if c.sum != nil {
		var d [sha256.Size]byte
		if string(c.sum.Sum(d[:0])) != string(l.lc.r.cfg.VerifySHA256) {
			c.sum.Reset()
			l.fail(c, ErrBodyMismatch, errBodyMismatch, now)
			return
		}
		c.sum.Reset()
	}
	l.lc.rec.response(c.tgt, c.p.Status, c.intended, c.written, now, c.p.HeaderBytes+c.p.BodyBytes)
	c.busy = false
	l.busy--
	c.reqs++
	if eof || c.p.Close || l.lc.r.cfg.NewConn {
		l.closeConn(c)
	}
	c.p.Reset()
	l.next(c, now)
}

// fail records a failed request on c, closes its socket and moves c on;
// a request that lost a keep-alive race is resent instead (see retryable).
func (l *h1Loop) fail(c *h1Conn, class ErrorClass, err error, now int64) {
	if l.retryable(c, class) {
		l.retry(c, now)
		return
	}
	l.lc.rec.fail(c.tgt, class, err, c.intended, now)
	if c.busy {
		c.busy = false
		l.busy--
	}
	if c.fd >= 0 {
		l.closeConn(c)
	}
	c.p.Reset()
	if c.sum != nil {
		c.sum.Reset()
	}
	if !l.lc.open {
		// Closed loop: do not spin on a failing server; retry after a
		// short pause (scan() picks the connection up again).
		c.retryAt = now + l.scanEvery
		if l.lc.stopping {
			l.idles = append(l.idles, c.idx)
		}
		return
	}
	l.next(c, now)
}

// retryable reports whether a failed request lost the keep-alive race: it
// went out on a connection kept alive from an earlier request, and the
// server closed that connection (FIN or reset, or the write hit the closed
// socket) before any byte of the response arrived. HTTP lets a client resend
// such a request on a new connection (RFC 9112 9.3.1); wrk, browsers and
// Go's client do. Once per request, so a server that closes every
// connection unanswered still shows its errors.
func (l *h1Loop) retryable(c *h1Conn, class ErrorClass) bool {
	switch class {
	case ErrClosed, ErrReset, ErrBrokenPipe:
	default:
		return false
	}
	return c.busy && c.reused && !c.retried && !l.lc.ended && !c.handshake && !c.connecting && !c.p.Started()
}

// retry resends c's request on a new connection. It keeps its intended
// time and its timeout clock.
func (l *h1Loop) retry(c *h1Conn, now int64) {
	c.retried = true
	c.reused = false
	if l.lc.rec.owed(c.intended) {
		l.lc.rec.retries++
	}
	l.closeConn(c)
	c.p.Reset()
	if c.sum != nil {
		c.sum.Reset()
	}
	l.connect(c, now)
}

// idleEvent handles activity on a connection with no request in progress.
func (l *h1Loop) idleEvent(c *h1Conn) {
	if c.fd < 0 {
		return
	}
	n, err := c.s.Read(l.buf)
	switch {
	case sock.NotReady(err):
		return
	case err != nil || n == 0:
		// The server closed an idle keep-alive connection: not an error,
		// the next request reconnects.
		l.closeConn(c)
	default:
		// Bytes nobody asked for: not a request's failure (none was in
		// flight), so it is counted apart and the connection dropped.
		l.lc.rec.unsolicited++
		l.closeConn(c)
	}
}

// closeConn closes c's socket.
func (l *h1Loop) closeConn(c *h1Conn) {
	l.closeSlot(&c.socketSlot)
	c.writing = false
	c.wrOff = 0
	l.track(c)
}
