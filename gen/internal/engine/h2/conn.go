package h2

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"

	wire "github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
)

// The slot setup's edges (tcploop.Proto; the TCP loop runs the setup): once the
// stream is set up, the preface and the requests started meanwhile go
// out, and what came with the handshake is read.
func (l *loop) SlotTrack(idx int32) { l.track(&l.slots[idx]) }
func (l *loop) SlotFailed(idx int32, class run.ErrorClass, err error, now int64) {
	l.failConn(&l.slots[idx], class, err, now)
}
func (l *loop) SlotOpened(int32)               {}
func (l *loop) SlotClose(idx int32)            { l.closeH2(&l.slots[idx]) }
func (l *loop) SlotOpen(idx int32) bool        { return l.slots[idx].Fd >= 0 }
func (l *loop) SlotBegin(idx int32, now int64) { l.offer(&l.slots[idx], now) }
func (l *loop) SlotReady(idx int32, _ int64) {
	c := &l.slots[idx]
	l.flush(c)
	if c.Fd >= 0 {
		l.read(c, unix.EPOLLIN)
	}
}

// handle processes the events of c's socket.
func (l *loop) handle(c *conn, ev uint32) {
	if l.SettingUp(&c.Slot, ev, l.LC.Now()) {
		return
	}
	if ev&unix.EPOLLOUT != 0 {
		full := c.c.Full()
		l.flush(c)
		if c.Fd < 0 {
			return
		}
		if full && !c.c.Full() && ev&unix.EPOLLIN == 0 {
			// The output went below h2.MaxPendingBytes: the streams
			// it held back may start (a read does this itself).
			l.afterStreams(c, l.LC.Now())
		}
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.read(c, ev)
	}
}

// flush writes what c's Conn has queued through the stream; what the
// socket does not take waits for EPOLLOUT. The requests started since the
// last flush get their written time as HTTP/1.1's do: when the write of
// their bytes begins (a write to loopback may run the server before it
// returns).
func (l *loop) flush(c *conn) {
	if c.Fd < 0 || c.Connecting || c.Handshake {
		return // the preface and requests go out when the stream is set up
	}
	if len(c.unsent) > 0 {
		now := l.LC.Now()
		for _, i := range c.unsent {
			if r := &c.reqs[i]; c.c.Busy(int(i)) && r.written == 0 {
				r.written = now
			}
		}
		c.unsent = c.unsent[:0]
	}
	for {
		p := c.c.Pending()
		if len(p) == 0 {
			break
		}
		n, err := c.S.Write(p)
		if n > 0 {
			l.LC.Rec.Written += uint64(n)
		}
		if sock.NotReady(err) {
			break // EPOLLOUT comes when the socket drains
		}
		if err != nil {
			l.failConn(c, run.Classify(err), err, l.LC.Now())
			return
		}
		c.c.Wrote(n)
		if n < len(p) {
			break // the socket is full
		}
	}
	if c.S.Pending() {
		if err := c.S.Flush(); err != nil {
			l.failConn(c, run.Classify(err), err, l.LC.Now())
			return
		}
	}
	l.track(c)
}

// read reads what the stream has, tcploop.ReadBudget bytes at most (the
// rest after the loop's other events), and feeds the Conn, whose Handler
// calls (the slot's methods below) record the responses; then the freed
// streams get their next requests and what they queued is written.
func (l *loop) read(c *conn, ev uint32) {
	fed := false
	budget := tcploop.ReadBudget
	for {
		n, err := c.S.Read(l.Buf)
		if err != nil {
			switch {
			case sock.NotReady(err):
				if !fed {
					l.readAt = l.LC.Now()
					l.doneTs = l.readAt
				}
				l.afterStreams(c, l.readAt)
				return
			case err == unix.EINTR:
				continue
			}
			l.failConn(c, run.Classify(err), err, l.LC.Now())
			return
		}
		l.readAt = l.LC.Now()
		l.doneTs = l.DoneAt(l.readAt, 0)
		fed = true
		if n == 0 {
			l.eof(c, l.readAt)
			return
		}
		l.LC.Reading(l.Buf[:n])
		if err := c.c.Feed(l.Buf[:n]); err != nil {
			l.flush(c) // the GOAWAY that tells the server why, if the socket takes it
			if c.Fd >= 0 {
				l.failConn(c, feedClass(err), err, l.readAt)
			}
			return
		}
		// A short read of a plain socket means it is drained (see
		// the HTTP/1.1 engine's readResponse), unless the peer's FIN came with the data.
		if c.S.DrainsOnShortRead() && n < len(l.Buf) && ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			l.afterStreams(c, l.readAt)
			return
		}
		if budget -= n; budget <= 0 {
			l.ReadLater(&c.Slot, ev)
			l.afterStreams(c, l.readAt)
			return
		}
	}
}

// feedClass is the class of a Feed error: h2.calm when the Conn ended the
// connection with ENHANCE_YOUR_CALM (the server went past one of its
// bounds), else parse (the server broke the protocol).
func feedClass(err error) run.ErrorClass {
	var ce *wire.ConnError
	if errors.As(err, &ce) && ce.Code == http2.ErrCodeEnhanceYourCalm {
		return run.ClassCalm
	}
	return run.ClassParse
}

// afterStreams moves c on after streams ended: a connection that starts no
// more streams (GOAWAY, ids used up; with NewConn, after its one request)
// closes once its last stream is done, and the slot takes requests again
// (it reconnects for them); otherwise its free streams take the next
// requests. What they queued is written.
func (l *loop) afterStreams(c *conn, now int64) {
	if c.Fd < 0 {
		return
	}
	l.noteLimit(c)
	if c.c.Active() == 0 && (c.c.Closing() || l.newConn) && !c.Connecting && !c.Handshake {
		l.closeH2(c)
		l.offer(c, now)
		l.markDirty(c) // the new socket's setup flushes; nothing to write before
		return
	}
	l.offer(c, now)
	l.flush(c)
}

// noteLimit records a server limit on concurrent streams below the run's.
func (l *loop) noteLimit(c *conn) {
	if lim, ok := c.c.ServerLimit(); ok && lim < uint32(l.streams) {
		if l.h2c.serverStreams == 0 || lim < l.h2c.serverStreams {
			l.h2c.serverStreams = lim
		}
	}
}

// eof handles the end of c's stream: an idle connection the server closed
// is not an error (the next request reconnects); requests still on it fail
// as closed, or as goaway when the server said why with an error code.
func (l *loop) eof(c *conn, now int64) {
	if c.c.Active() == 0 {
		l.closeH2(c)
		l.offer(c, now)
		return
	}
	if c.goAway && c.goAwayCode != http2.ErrCodeNo {
		l.failConn(c, run.ClassGoAway, l.goAwayErr(c), now)
		return
	}
	l.failConn(c, run.ClassClosed, errH2Closed, now)
}

// goAwayErr describes the loss of c's streams after its GOAWAY (only the
// first sample of the class is kept, so it is built once).
func (l *loop) goAwayErr(c *conn) error {
	if l.LC.Rec.FirstErr[run.ClassGoAway] != nil {
		return errStreamSeen
	}
	return fmt.Errorf("the server sent GOAWAY %s (last stream %d) and closed the connection before the response", c.goAwayCode, c.goAwayLast)
}

// failConn fails every request on c's socket with class, closes it and
// moves the slot on (in closed loop after a backoff).
func (l *loop) failConn(c *conn, class run.ErrorClass, err error, now int64) {
	for i := range c.reqs {
		if c.c.Busy(i) {
			l.busy--
			l.LC.Rec.Fail(c.reqs[i].tgt, class, err, c.reqs[i].intended, now)
		}
	}
	l.closeH2(c)
	l.backoff(c, now)
	l.offer(c, now)
}

// closeH2 closes c's socket; its Conn is made fresh for the next one.
func (l *loop) closeH2(c *conn) {
	l.CloseSlot(&c.Slot)
	c.unsent = c.unsent[:0]
	c.c.Reset()
	l.track(c)
	for i := range c.reqs {
		if s := c.reqs[i].sum; s != nil {
			s.Reset()
		}
	}
}

// The wire.Handler methods: Feed calls them, in the order of the frames, while
// the loop reads c's socket.

// Response records the status of stream slot i's response.
func (c *conn) Response(i, status int) { c.reqs[i].status = status }

// Body counts (and, verifying, hashes) body bytes of slot i's response.
func (c *conn) Body(i int, b []byte) {
	r := &c.reqs[i]
	r.bytes += int64(len(b))
	if r.sum != nil {
		r.sum.Write(b)
	}
}

// Done records slot i's complete response: a response of its status, or
// body_mismatch when verifying and the digest differs.
func (c *conn) Done(i int) {
	l, r := c.l, &c.reqs[i]
	l.busy--
	w := r.written
	if w == 0 {
		w = r.started // the response came before our flush finished
	}
	now := max(l.doneTs, w)
	if r.sum != nil {
		var d [sha256.Size]byte
		ok := string(r.sum.Sum(d[:0])) == string(l.LC.R.Spec.VerifySHA256)
		r.sum.Reset()
		if !ok {
			l.LC.Rec.Fail(r.tgt, run.ClassBodyMismatch, run.ErrBodyMismatch, r.intended, now)
			l.backoff(c, now)
			return
		}
	}
	l.LC.Rec.Response(r.tgt, r.status, r.intended, w, now, r.bytes)
}

// Reset records a stream the server reset (RST_STREAM, any code but
// REFUSED_STREAM) as stream_reset, counted per code.
func (c *conn) Reset(i int, code http2.ErrCode) {
	l, r, now := c.l, &c.reqs[i], c.l.doneTs
	l.busy--
	if r.sum != nil {
		r.sum.Reset()
	}
	if l.LC.Rec.Owed(r.intended) {
		l.h2c.resetCodes[codeSlot(code)]++
	}
	err := errStreamSeen
	if l.LC.Rec.FirstErr[run.ClassStreamReset] == nil {
		err = fmt.Errorf("the server reset the stream: RST_STREAM %s", code)
	}
	l.LC.Rec.Fail(r.tgt, run.ClassStreamReset, err, r.intended, now)
	l.backoff(c, now)
}

// Refused puts a request the server did not process back at the head of
// the pending queue, with its intended time, to be sent again (on any
// slot: this one may be going away).
func (c *conn) Refused(i int, _ http2.ErrCode) {
	l, r, now := c.l, &c.reqs[i], c.l.readAt
	l.busy--
	if r.sum != nil {
		r.sum.Reset()
	}
	if !l.LC.Requeue(r.intended, r.tgt) {
		// No room to wait (open loop, the queue at its bound): given up
		// as the queue gives up its oldest request, dropped.
		if l.LC.Rec.Owed(r.intended) {
			l.LC.Rec.Dropped++
		}
		l.LC.Rec.Fail(r.tgt, run.ClassDropped, run.ErrDropped, r.intended, now)
		return
	}
	if l.LC.Rec.Owed(r.intended) {
		l.h2c.refused++
	}
	if !c.goAway {
		// REFUSED_STREAM: the server is shedding load; in closed loop
		// the slot pauses as after an error. After a GOAWAY the slot
		// reconnects at once instead.
		l.backoff(c, now)
	}
}

// GoAway notes the server's GOAWAY: c starts no more streams, the ones up
// to last still complete, and the connection closes after them. Each
// connection counts once, with the first GOAWAY's code.
func (c *conn) GoAway(last uint32, code http2.ErrCode) {
	l := c.l
	if !c.goAway && l.LC.Rec.Owed(l.readAt) {
		l.h2c.goaways++
		l.h2c.goawayCodes[codeSlot(code)]++
	}
	c.goAway, c.goAwayCode, c.goAwayLast = true, code, last
}
