package gen

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"

	"github.com/loadlab/loadlab/gen/internal/sock"

	"github.com/loadlab/loadlab/gen/h2"
	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"
)

// h2Conn is one HTTP/2 connection slot of a loop. Its socket may be closed
// and reopened many times (GOAWAY, errors, a new connection per request);
// gen tells events of an old socket from the current one. Its byte stream
// is s (plain for h2c, TLS with ALPN h2 for https://, as HTTP/1.1's); its
// Conn c speaks the protocol and reports each stream's response to the
// slot, its Handler, which records it. reqs holds the state of the request
// on each of c's stream slots.
//
// Invariant: without a socket (fd < 0) c is fresh (Reset: no busy stream,
// the preface queued for the next socket).
type h2Conn struct {
	socketSlot
	l      *h2Loop
	queued bool // in the loop's ready ring
	dirty  bool // in the loop's dirty list

	c      *h2.Conn
	reqs   []h2Req // by c's stream slot
	unsent []int32 // stream slots started whose bytes have not all left yet

	retryAt int64 // closed loop: no new request before this time

	goAway     bool // the server sent GOAWAY on this socket
	goAwayCode http2.ErrCode
	goAwayLast uint32
}

// h2Req is one request on a stream.
type h2Req struct {
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

// The slot setup's edges (slotProto; slot.go runs the setup): once the
// stream is set up, the preface and the requests started meanwhile go
// out, and what came with the handshake is read.
func (l *h2Loop) slotTrack(idx int32) { l.track(&l.slots[idx]) }
func (l *h2Loop) slotFailed(idx int32, class ErrorClass, err error, now int64) {
	l.failConn(&l.slots[idx], class, err, now)
}
func (l *h2Loop) slotOpened(int32)               {}
func (l *h2Loop) slotClose(idx int32)            { l.closeH2(&l.slots[idx]) }
func (l *h2Loop) slotOpen(idx int32) bool        { return l.slots[idx].fd >= 0 }
func (l *h2Loop) slotBegin(idx int32, now int64) { l.offer(&l.slots[idx], now) }
func (l *h2Loop) slotReady(idx int32, _ int64) {
	c := &l.slots[idx]
	l.flush(c)
	if c.fd >= 0 {
		l.read(c, unix.EPOLLIN)
	}
}

// handle processes the events of c's socket.
func (l *h2Loop) handle(c *h2Conn, ev uint32) {
	if l.settingUp(&c.socketSlot, ev, l.lc.now()) {
		return
	}
	if ev&unix.EPOLLOUT != 0 {
		full := c.c.Full()
		l.flush(c)
		if c.fd < 0 {
			return
		}
		if full && !c.c.Full() && ev&unix.EPOLLIN == 0 {
			// The output went below h2.MaxPendingBytes: the streams
			// it held back may start (a read does this itself).
			l.afterStreams(c, l.lc.now())
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
func (l *h2Loop) flush(c *h2Conn) {
	if c.fd < 0 || c.connecting || c.handshake {
		return // the preface and requests go out when the stream is set up
	}
	if len(c.unsent) > 0 {
		now := l.lc.now()
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
		n, err := c.s.Write(p)
		if n > 0 {
			l.lc.rec.written += uint64(n)
		}
		if sock.NotReady(err) {
			break // EPOLLOUT comes when the socket drains
		}
		if err != nil {
			l.failConn(c, classify(err), err, l.lc.now())
			return
		}
		c.c.Wrote(n)
		if n < len(p) {
			break // the socket is full
		}
	}
	if c.s.Pending() {
		if err := c.s.Flush(); err != nil {
			l.failConn(c, classify(err), err, l.lc.now())
			return
		}
	}
	l.track(c)
}

// read reads what the stream has, readBudget bytes at most (the rest after
// the loop's other events), and feeds the Conn, whose Handler calls (the
// slot's methods below) record the responses; then the freed streams get
// their next requests and what they queued is written.
func (l *h2Loop) read(c *h2Conn, ev uint32) {
	fed := false
	budget := readBudget
	for {
		n, err := c.s.Read(l.buf)
		if err != nil {
			switch {
			case sock.NotReady(err):
				if !fed {
					l.readAt = l.lc.now()
					l.doneTs = l.readAt
				}
				l.afterStreams(c, l.readAt)
				return
			case err == unix.EINTR:
				continue
			}
			l.failConn(c, classify(err), err, l.lc.now())
			return
		}
		l.readAt = l.lc.now()
		l.doneTs = l.doneAt(l.readAt, 0)
		fed = true
		if n == 0 {
			l.eof(c, l.readAt)
			return
		}
		l.lc.reading(l.buf[:n])
		if err := c.c.Feed(l.buf[:n]); err != nil {
			l.flush(c) // the GOAWAY that tells the server why, if the socket takes it
			if c.fd >= 0 {
				l.failConn(c, feedClass(err), err, l.readAt)
			}
			return
		}
		// A short read of a plain socket means it is drained (see
		// loop.readResponse), unless the peer's FIN came with the data.
		if c.s.DrainsOnShortRead() && n < len(l.buf) && ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			l.afterStreams(c, l.readAt)
			return
		}
		if budget -= n; budget <= 0 {
			l.readLater(&c.socketSlot, ev)
			l.afterStreams(c, l.readAt)
			return
		}
	}
}

// feedClass is the class of a Feed error: h2.calm when the Conn ended the
// connection with ENHANCE_YOUR_CALM (the server went past one of its
// bounds), else parse (the server broke the protocol).
func feedClass(err error) ErrorClass {
	var ce *h2.ConnError
	if errors.As(err, &ce) && ce.Code == http2.ErrCodeEnhanceYourCalm {
		return ErrCalm
	}
	return ErrParse
}

// afterStreams moves c on after streams ended: a connection that starts no
// more streams (GOAWAY, ids used up; with NewConn, after its one request)
// closes once its last stream is done, and the slot takes requests again
// (it reconnects for them); otherwise its free streams take the next
// requests. What they queued is written.
func (l *h2Loop) afterStreams(c *h2Conn, now int64) {
	if c.fd < 0 {
		return
	}
	l.noteLimit(c)
	if c.c.Active() == 0 && (c.c.Closing() || l.newConn) && !c.connecting && !c.handshake {
		l.closeH2(c)
		l.offer(c, now)
		l.markDirty(c) // the new socket's setup flushes; nothing to write before
		return
	}
	l.offer(c, now)
	l.flush(c)
}

// noteLimit records a server limit on concurrent streams below the run's.
func (l *h2Loop) noteLimit(c *h2Conn) {
	if lim, ok := c.c.ServerLimit(); ok && lim < uint32(l.streams) {
		if l.h2c.serverStreams == 0 || lim < l.h2c.serverStreams {
			l.h2c.serverStreams = lim
		}
	}
}

// eof handles the end of c's stream: an idle connection the server closed
// is not an error (the next request reconnects); requests still on it fail
// as closed, or as goaway when the server said why with an error code.
func (l *h2Loop) eof(c *h2Conn, now int64) {
	if c.c.Active() == 0 {
		l.closeH2(c)
		l.offer(c, now)
		return
	}
	if c.goAway && c.goAwayCode != http2.ErrCodeNo {
		l.failConn(c, ErrGoAway, l.goAwayErr(c), now)
		return
	}
	l.failConn(c, ErrClosed, errH2Closed, now)
}

// goAwayErr describes the loss of c's streams after its GOAWAY (only the
// first sample of the class is kept, so it is built once).
func (l *h2Loop) goAwayErr(c *h2Conn) error {
	if l.lc.rec.firstErr[ErrGoAway] != nil {
		return errStreamSeen
	}
	return fmt.Errorf("the server sent GOAWAY %s (last stream %d) and closed the connection before the response", c.goAwayCode, c.goAwayLast)
}

// failConn fails every request on c's socket with class, closes it and
// moves the slot on (in closed loop after a backoff).
func (l *h2Loop) failConn(c *h2Conn, class ErrorClass, err error, now int64) {
	for i := range c.reqs {
		if c.c.Busy(i) {
			l.busy--
			l.lc.rec.fail(c.reqs[i].tgt, class, err, c.reqs[i].intended, now)
		}
	}
	l.closeH2(c)
	l.backoff(c, now)
	l.offer(c, now)
}

// closeH2 closes c's socket; its Conn is made fresh for the next one.
func (l *h2Loop) closeH2(c *h2Conn) {
	l.closeSlot(&c.socketSlot)
	c.unsent = c.unsent[:0]
	c.c.Reset()
	l.track(c)
	for i := range c.reqs {
		if s := c.reqs[i].sum; s != nil {
			s.Reset()
		}
	}
}

// The h2.Handler methods: Feed calls them, in the order of the frames, while
// the loop reads c's socket.

// Response records the status of stream slot i's response.
func (c *h2Conn) Response(i, status int) { c.reqs[i].status = status }

// Body counts (and, verifying, hashes) body bytes of slot i's response.
func (c *h2Conn) Body(i int, b []byte) {
	r := &c.reqs[i]
	r.bytes += int64(len(b))
	if r.sum != nil {
		r.sum.Write(b)
	}
}

// Done records slot i's complete response: a response of its status, or
// body_mismatch when verifying and the digest differs.
func (c *h2Conn) Done(i int) {
	l, r := c.l, &c.reqs[i]
	l.busy--
	w := r.written
	if w == 0 {
		w = r.started // the response came before our flush finished
	}
	now := max(l.doneTs, w)
	if r.sum != nil {
		var d [sha256.Size]byte
		ok := string(r.sum.Sum(d[:0])) == string(l.lc.r.cfg.VerifySHA256)
		r.sum.Reset()
		if !ok {
			l.lc.rec.fail(r.tgt, ErrBodyMismatch, errBodyMismatch, r.intended, now)
			l.backoff(c, now)
			return
		}
	}
	l.lc.rec.response(r.tgt, r.status, r.intended, w, now, r.bytes)
}

// Reset records a stream the server reset (RST_STREAM, any code but
// REFUSED_STREAM) as stream_reset, counted per code.
func (c *h2Conn) Reset(i int, code http2.ErrCode) {
	l, r, now := c.l, &c.reqs[i], c.l.doneTs
	l.busy--
	if r.sum != nil {
		r.sum.Reset()
	}
	if l.lc.rec.owed(r.intended) {
		l.h2c.resetCodes[codeSlot(code)]++
	}
	err := errStreamSeen
	if l.lc.rec.firstErr[ErrStreamReset] == nil {
		err = fmt.Errorf("the server reset the stream: RST_STREAM %s", code)
	}
	l.lc.rec.fail(r.tgt, ErrStreamReset, err, r.intended, now)
	l.backoff(c, now)
}

// Refused puts a request the server did not process back at the head of
// the pending queue, with its intended time, to be sent again (on any
// slot: this one may be going away).
func (c *h2Conn) Refused(i int, _ http2.ErrCode) {
	l, r, now := c.l, &c.reqs[i], c.l.readAt
	l.busy--
	if r.sum != nil {
		r.sum.Reset()
	}
	if !l.lc.requeue(r.intended, r.tgt) {
		// No room to wait (open loop, the queue at its bound): given up
		// as the queue gives up its oldest request, dropped.
		if l.lc.rec.owed(r.intended) {
			l.lc.rec.dropped++
		}
		l.lc.rec.fail(r.tgt, ErrDropped, errDropped, r.intended, now)
		return
	}
	if l.lc.rec.owed(r.intended) {
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
func (c *h2Conn) GoAway(last uint32, code http2.ErrCode) {
	l := c.l
	if !c.goAway && l.readAt >= l.lc.r.warmup {
		l.h2c.goaways++
		l.h2c.goawayCodes[codeSlot(code)]++
	}
	c.goAway, c.goAwayCode, c.goAwayLast = true, code, last
}
