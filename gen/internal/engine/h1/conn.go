package h1

import (
	"crypto/sha256"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
)

func (c *conn) init(idx int, verify, head bool) {
	c.Idx = int32(idx)
	c.Fd = -1
	c.p.NoBody = head // a HEAD response has headers only, whatever its Content-Length
	if verify {
		c.sum = sha256.New()
		c.p.BodySink = c.sum
	}
}

// connect opens a new non-blocking socket for c and starts connecting
// (the TCP loop runs the setup; the request goes out once it is done).
func (l *loop) connect(c *conn, now int64) {
	if class, err := l.ConnectSlot(&c.Slot, c.intended, now); err != nil {
		l.fail(c, class, err, now)
	}
}

// track keeps c in the loop's count of connections that need prompt events.
func (l *loop) track(c *conn) { l.TrackSlot(&c.Slot, c.writing) }

// The slot setup's edges (tcploop.Proto).
func (l *loop) SlotTrack(idx int32) { l.track(&l.slots[idx]) }
func (l *loop) SlotFailed(idx int32, class run.ErrorClass, err error, now int64) {
	l.fail(&l.slots[idx], class, err, now)
}
func (l *loop) SlotOpened(idx int32)           { l.slots[idx].reqs = 0 }
func (l *loop) SlotReady(idx int32, now int64) { l.writeRequest(&l.slots[idx], now) }
func (l *loop) SlotClose(idx int32)            { l.closeConn(&l.slots[idx]) }
func (l *loop) SlotOpen(idx int32) bool        { return l.slots[idx].Fd >= 0 }
func (l *loop) SlotBegin(idx int32, now int64) {
	l.dispatch(&l.slots[idx], now, l.LC.ClosedTarget(), now)
}

// handle processes the events of c's socket.
func (l *loop) handle(c *conn, ev uint32) {
	now := l.LC.Now()
	if l.SettingUp(&c.Slot, ev, now) {
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
			if c.Fd < 0 || c.writing {
				return
			}
		}
		if c.S.Pending() {
			if err := c.S.Flush(); err != nil {
				l.fail(c, classify(err), err, now)
				return
			}
			l.track(c)
		} else if ev&unix.EPOLLOUT != 0 && c.Unsettled {
			l.track(c) // io_uring: a send completed and took what waited for it
		}
		if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 && !c.writing {
			l.readResponse(c, ev)
		}
	}
}

// writeRequest writes (the rest of) the serialized request, then what the
// stream still has queued (a TLS handshake's last flight leaves with it).
func (l *loop) writeRequest(c *conn, now int64) {
	req := l.e.reqs[c.tgt]
	if c.wrOff == 0 {
		c.written = now
	}
	n, err := c.S.Write(req[c.wrOff:])
	if n > 0 {
		l.LC.Rec.Written += uint64(n)
	}
	if sock.NotReady(err) {
		c.writing = true
		l.track(c)
		return
	}
	if err == nil && c.S.Pending() {
		err = c.S.Flush()
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

// readResponse reads what the stream has, tcploop.ReadBudget bytes at most (the
// rest after the loop's other events), and feeds the parser. ev is the
// epoll event that woke the loop.
func (l *loop) readResponse(c *conn, ev uint32) {
	budget := tcploop.ReadBudget
	for {
		buf, n, err := l.readFrom(c)
		if err != nil {
			switch {
			case sock.NotReady(err):
				return
			case err == unix.EINTR:
				continue
			}
			l.fail(c, classify(err), err, l.LC.Now())
			return
		}
		if n == 0 {
			if done, perr := c.p.EOF(); !done {
				l.fail(c, run.ClassClosed, perr, l.LC.Now())
			} else {
				l.complete(c, true)
			}
			return
		}
		l.LC.Reading(buf[:n])
		used, done, perr := c.p.Feed(buf[:n])
		if perr != nil {
			l.fail(c, run.ClassParse, perr, l.LC.Now())
			return
		}
		if done {
			if used < n {
				// Bytes beyond a complete response: the response stands,
				// but nothing was asked for after it (no pipelining), so the
				// connection cannot be trusted for the next one.
				l.LC.Rec.Unsolicited++
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
		if c.S.DrainsOnShortRead() && n < len(buf) && ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			return
		}
		if budget -= n; budget <= 0 {
			l.ReadLater(&c.Slot, ev)
			return
		}
	}
}

// readFrom reads what c's stream has: into the loop's buffer, or the
// stream's own (a plain socket on io_uring lends its received buffer: no
// copy, valid until the loop next waits).
func (l *loop) readFrom(c *conn) ([]byte, int, error) {
	b, err := c.S.View(l.Buf)
	return b, len(b), err
}

// complete records a finished response and moves c on.
func (l *loop) complete(c *conn, eof bool) {
	now := l.DoneAt(l.LC.Now(), c.written)
	if c.sum != nil {
		var d [sha256.Size]byte
		if string(c.sum.Sum(d[:0])) != string(l.LC.R.Spec.VerifySHA256) {
			c.sum.Reset()
			l.fail(c, run.ClassBodyMismatch, run.ErrBodyMismatch, now)
			return
		}
		c.sum.Reset()
	}
	l.LC.Rec.Response(c.tgt, c.p.Status, c.intended, c.written, now, c.p.HeaderBytes+c.p.BodyBytes)
	c.busy = false
	l.busy--
	c.reqs++
	if eof || c.p.Close || l.LC.R.Spec.NewConn {
		l.closeConn(c)
	}
	c.p.Reset()
	l.next(c, now)
}

// fail records a failed request on c, closes its socket and moves c on;
// a request that lost a keep-alive race is resent instead (see retryable).
func (l *loop) fail(c *conn, class run.ErrorClass, err error, now int64) {
	if l.retryable(c, class) {
		l.retry(c, now)
		return
	}
	l.LC.Rec.Fail(c.tgt, class, err, c.intended, now)
	if c.busy {
		c.busy = false
		l.busy--
	}
	if c.Fd >= 0 {
		l.closeConn(c)
	}
	c.p.Reset()
	if c.sum != nil {
		c.sum.Reset()
	}
	if !l.LC.Open {
		// Closed loop: do not spin on a failing server; retry after a
		// short pause (scan() picks the connection up again).
		c.retryAt = now + l.ScanEvery
		if l.LC.Stopping {
			l.idles = append(l.idles, c.Idx)
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
func (l *loop) retryable(c *conn, class run.ErrorClass) bool {
	switch class {
	case run.ClassClosed, run.ClassReset, run.ClassBrokenPipe:
	default:
		return false
	}
	return c.busy && c.reused && !c.retried && !l.LC.Ended && !c.Handshake && !c.Connecting && !c.p.Started()
}

// retry resends c's request on a new connection. It keeps its intended
// time and its timeout clock.
func (l *loop) retry(c *conn, now int64) {
	c.retried = true
	c.reused = false
	if l.LC.Rec.Owed(c.intended) {
		l.LC.Rec.Retries++
	}
	l.closeConn(c)
	c.p.Reset()
	if c.sum != nil {
		c.sum.Reset()
	}
	l.connect(c, now)
}

// idleEvent handles activity on a connection with no request in progress.
func (l *loop) idleEvent(c *conn) {
	if c.Fd < 0 {
		return
	}
	n, err := c.S.Read(l.Buf)
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
		l.LC.Rec.Unsolicited++
		l.closeConn(c)
	}
}

// closeConn closes c's socket.
func (l *loop) closeConn(c *conn) {
	l.CloseSlot(&c.Slot)
	c.writing = false
	c.wrOff = 0
	l.track(c)
}
