package gen

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"math"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	genquic "github.com/loadlab/loadlab/gen/quic"
)

// h3LeanLoop is one loop of the lean HTTP/3 engine (its driver): the TCP
// loops' thread, poller and accounts (tcpLoop: pinned, epoll, raw system
// calls), with UDP sockets instead of one socket per slot. Each slot is
// one QUIC connection at a time (gen/quic's Conn, a state machine without
// I/O) carrying one request at a time: kept alive from request to
// request while it is Reusable, or with {NewConn} a connection per
// request.
//
// A pass of the loop (the events of one wait, the timers due, the requests
// the lifecycle starts) appends the datagrams the Conns produce to their
// socket's Sender; wait sends them all with sendmmsg before it sleeps.
// Timers: each Conn says when it needs Timeout (Deadline); the loop keeps
// the earliest of them (timerAt, a lower bound: a Conn whose deadline moved
// later is only looked at early) and wakes for it.
//
// Nothing in it is shared with another goroutine while it runs: its lock
// is a no-op, as the TCP loops' is.
type h3LeanLoop struct {
	tcpLoop
	e     *h3LeanEngine
	cl    *genquic.Client
	start time.Time // the run's start: the Conns' clock is time.Time
	socks []leanSock
	slots []leanSlot
	ready ring32 // open loop: slots that may take a request, each at most once
	busy  int    // requests in flight

	timerAt  int64 // earliest Conn deadline, run clock (math.MaxInt64: none)
	keepLeaf bool  // the Client keeps the server's leaf until the TLS account has it
}

// leanSock is one of the loop's UDP sockets, connected to the target.
type leanSock struct {
	fd int
	tx *rawio.Sender
	rx *rawio.Receiver
}

// leanSlot is one connection slot: its Conn and the request in flight.
type leanSlot struct {
	conn     genquic.Conn
	idx      int32
	sock     int32 // index in the loop's socks
	open     bool  // conn started and not closed
	busy     bool  // a request in flight
	queued   bool  // in the ready ring (open loop)
	hsSeen   bool  // the conn's handshake was counted
	retried  bool  // the request was already sent again once (see retryable)
	tgt      int32
	intended int64 // the request's intended time
	started  int64 // when the request (and its connection, if new) started
	written  int64 // when its request left: with the client's Finished on a new connection
	retryAt  int64 // closed loop: no new request before (after a failure)
	sum      hash.Hash
}

// newH3LeanLoop builds loop lc of e with n connection slots (the sockets
// are opened by setup, on the loop's thread, inside the run's network
// namespace).
func newH3LeanLoop(e *h3LeanEngine, lc *lifecycle, n int) (*h3LeanLoop, error) {
	r := e.r
	if n > math.MaxUint16+1 {
		return nil, fmt.Errorf("HTTP/3 on the lean QUIC client: %d connections on one loop, at most %d: add CPUs or use {TLS.Engine} std", n, math.MaxUint16+1)
	}
	l := &h3LeanLoop{e: e, start: r.start, timerAt: math.MaxInt64}
	l.lc = lc
	l.family, l.pwait2 = e.family, e.pwait2
	l.wakefd = -1
	l.newPoller = func(l *tcpLoop) (poller, error) { return newEpollPoller(l) }
	l.scanEvery = scanPeriod(r.cfg)
	l.nextScan = l.scanEvery
	cl, err := genquic.NewClient(e.qc)
	if err != nil {
		return nil, fmt.Errorf("lean QUIC client: %w", err)
	}
	l.cl = cl
	l.keepLeaf = !r.tls.Captured()
	cl.SetKeepLeaf(l.keepLeaf)
	nsock := max(len(r.cfg.SrcAddrs), 1)
	l.slots = make([]leanSlot, n)
	l.ready = newRing32(n)
	for j := range l.slots {
		s := &l.slots[j]
		s.idx, s.sock = int32(j), int32((lc.id+j)%nsock)
		if r.cfg.VerifySHA256 != nil {
			s.sum = sha256.New()
		}
		if lc.open {
			l.ready.push(s.idx)
			s.queued = true
		}
	}
	return l, nil
}

// setup pins the thread, enters the namespace, makes the poller (tcpLoop)
// and opens the loop's UDP sockets into it.
func (l *h3LeanLoop) setup() error {
	if err := l.tcpLoop.setup(); err != nil {
		return err
	}
	p, ok := l.poll.(*epollPoller)
	if !ok {
		return fmt.Errorf("HTTP/3 on the lean QUIC client needs the epoll poller")
	}
	srcs := l.lc.r.cfg.SrcAddrs
	if len(srcs) == 0 {
		srcs = []netip.Addr{{}}
	}
	for i, src := range srcs {
		fd, err := l.e.openUDP(src)
		if err != nil {
			return err
		}
		l.socks = append(l.socks, leanSock{fd: fd, tx: rawio.NewSender(fd, leanBatch, leanDatagram), rx: rawio.NewReceiver(fd, leanBatch, leanDatagram)})
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(i)}
		if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	return nil
}

func (l *h3LeanLoop) teardown() {
	for _, s := range l.socks {
		unix.Close(s.fd)
	}
	l.closeFds()
}

func (l *h3LeanLoop) inflight() int { return l.busy }

// openConns counts the slots with a QUIC connection open.
func (l *h3LeanLoop) openConns() int {
	n := 0
	for i := range l.slots {
		if l.slots[i].open {
			n++
		}
	}
	return n
}

// dropped counts the datagrams the kernel refused to send (after the run).
func (l *h3LeanLoop) dropped() int64 {
	var n int64
	for _, s := range l.socks {
		n += s.tx.Dropped
	}
	return n
}

// at is now (ns on the run's clock) as the Conns' time.
func (l *h3LeanLoop) at(now int64) time.Time { return l.start.Add(time.Duration(now)) }

// begin starts every slot's first request (closed loop).
func (l *h3LeanLoop) begin(now int64) {
	if l.lc.open {
		return
	}
	for i := range l.slots {
		l.next(&l.slots[i], now)
	}
}

// idle returns the next slot of the ready ring that can take a request
// (open loop).
func (l *h3LeanLoop) idle() (int, bool) {
	for l.ready.len() > 0 {
		i := l.ready.pop()
		s := &l.slots[i]
		s.queued = false
		if !s.busy && !l.lc.ended {
			return int(i), true
		}
	}
	return 0, false
}

func (l *h3LeanLoop) send(i int, intended int64, tgt int32, now int64) {
	l.startReq(&l.slots[i], intended, tgt, now)
}

// startReq starts a request intended at intended on s: on its kept-alive
// connection if that is Reusable, else on a new one, whose request goes
// with the client's Finished. Its timeout runs from now, through the
// handshake.
func (l *h3LeanLoop) startReq(s *leanSlot, intended int64, tgt int32, now int64) {
	l.lc.starting(intended, now)
	l.busy++
	s.busy, s.retried, s.tgt, s.intended, s.started = true, false, tgt, intended, now
	if s.sum != nil {
		s.sum.Reset()
		s.conn.Body = s.sum
	}
	l.lc.rec.written += l.e.reqBytes
	tx := l.socks[s.sock].tx
	if s.open {
		t := l.at(now)
		if s.conn.Reusable(t) {
			out, err := s.conn.Next(t, tx.Buf(leanDatagram))
			tx.Add(out)
			s.written = now
			if err != nil { // not reached: Reusable said it may
				l.settle(s, now, err)
				return
			}
			l.arm(s)
			return
		}
		tx.Add(s.conn.Close(t, tx.Buf(leanDatagram)))
		s.open = false
	}
	l.dial(s, now)
}

// dial starts a new connection on s for its request.
func (l *h3LeanLoop) dial(s *leanSlot, now int64) {
	s.hsSeen, s.written = false, 0
	s.conn.Tag = uint16(s.idx)
	tx := l.socks[s.sock].tx
	out, err := s.conn.Start(l.cl, l.at(now), tx.Buf(leanDatagram))
	tx.Add(out)
	if err != nil {
		l.settle(s, now, err)
		return
	}
	s.open = true
	l.arm(s)
}

// arm keeps timerAt at or before s's Conn's deadline.
func (l *h3LeanLoop) arm(s *leanSlot) {
	d := s.conn.Deadline()
	if d.IsZero() {
		return
	}
	if t := int64(d.Sub(l.start)); t < l.timerAt {
		l.timerAt = t
	}
}

// event reads socket idx's datagrams (edge-triggered: until it has fewer
// than a batch) and hands each to its slot's Conn.
func (l *h3LeanLoop) event(idx, _ int32, _ uint32) {
	sk := &l.socks[idx]
	for {
		n, _ := sk.rx.Read() // an ICMP error: the Conns time out or resend
		if n == 0 {
			return
		}
		now := l.lc.now()
		t := l.at(now)
		for i := 0; i < n; i++ {
			d := sk.rx.Datagram(i)
			l.lc.reading(d)
			s := l.find(d)
			if s == nil {
				continue // a connection that has ended, or not ours
			}
			out, _ := s.conn.Receive(t, d, sk.tx.Buf(leanDatagram))
			sk.tx.Add(out)
			l.after(s, now)
		}
		if n < leanBatch {
			return
		}
	}
}

// find returns the open slot whose connection datagram d is for, by the
// destination connection ID the server sent it to: its tag is the slot's
// index (dial sets Conn.Tag); nil if none.
func (l *h3LeanLoop) find(d []byte) *leanSlot {
	tag, ok := genquic.TagOf(d)
	if !ok || int(tag) >= len(l.slots) {
		return nil
	}
	s := &l.slots[tag]
	if !s.open || !bytes.Equal(s.conn.SCID(), genquic.DestConnID(d)) {
		return nil
	}
	return s
}

// after looks at s's Conn after it took a datagram or a timeout: a
// completed handshake is counted once, a complete response ends the
// request (the connection stays open with keep-alive), and a closed
// connection fails the request in flight, if any (a connection the
// server closed between requests is no error: the next request opens a
// new one).
func (l *h3LeanLoop) after(s *leanSlot, now int64) {
	if !s.hsSeen {
		if at, ok := s.conn.HandshakeDone(); ok {
			l.handshakeDone(s, int64(at.Sub(l.start)))
		}
	}
	switch {
	case s.busy && s.conn.Done():
		if s.conn.Closed() {
			s.open = false
		}
		l.settle(s, now, nil)
	case s.conn.Closed():
		s.open = false
		if s.busy {
			l.settle(s, now, s.conn.Err())
		}
	default:
		l.arm(s)
	}
}

// handshakeDone counts s's completed handshake (done at hs, run clock):
// the request left with the client's Finished.
func (l *h3LeanLoop) handshakeDone(s *leanSlot, hs int64) {
	s.hsSeen = true
	s.written = hs
	l.lc.rec.dials++
	if s.busy {
		l.lc.rec.countHandshake(s.intended, hs-s.started, false)
	}
	if !l.e.done.Load() {
		l.e.done.Store(true)
	}
	if l.keepLeaf {
		l.e.leanCapture(&s.conn)
		l.keepLeaf = !l.lc.r.tls.Captured()
		l.cl.SetKeepLeaf(l.keepLeaf)
	}
}

// settle records the outcome of s's request, which has ended with err
// (nil: a complete response), and gives s its next request. A request
// the server refused without processing it, on a connection that had
// carried requests before, is sent once more on a new connection (see
// retryable).
func (l *h3LeanLoop) settle(s *leanSlot, now int64, err error) {
	if !s.busy {
		return // given up at the drain's end
	}
	if err == nil && s.sum != nil {
		var d [sha256.Size]byte
		if !bytes.Equal(s.sum.Sum(d[:0]), l.lc.r.cfg.VerifySHA256) {
			err = errBodyMismatch
		}
	}
	if err != nil && l.retryable(s, err) {
		s.retried = true
		if l.lc.rec.owed(s.intended) {
			l.lc.rec.retries++
		}
		if s.open {
			tx := l.socks[s.sock].tx
			tx.Add(s.conn.Close(l.at(now), tx.Buf(leanDatagram)))
			s.open = false
		}
		if s.sum != nil {
			s.sum.Reset()
		}
		l.dial(s, now)
		return
	}
	s.busy = false
	l.busy--
	switch {
	case err == nil:
		l.lc.rec.response(s.tgt, s.conn.Status(), s.intended, max(s.written, s.started), now, s.conn.BodyBytes())
	case err == errBodyMismatch:
		l.lc.rec.fail(s.tgt, ErrBodyMismatch, err, s.intended, now)
	default:
		l.lc.rec.fail(s.tgt, classifyLean(err), err, s.intended, now)
		if !l.lc.open {
			s.retryAt = now + l.scanEvery // do not spin on a failing server
		}
	}
	l.next(s, now)
}

// HTTP/3 error codes (RFC 9114 §8.1) the loop tells apart.
const (
	h3NoError         = 0x100
	h3RequestRejected = 0x10b
)

// retryable reports whether s's failed request may be sent once more on a
// new connection: it went out on a connection that had already carried a
// request, nothing of its response came, and the server refused it
// unprocessed (H3_REQUEST_REJECTED) or closed the connection cleanly
// (H3_NO_ERROR: it was shutting the connection down as the request
// left), as the HTTP/1.1 engine resends after a keep-alive close.
func (l *h3LeanLoop) retryable(s *leanSlot, err error) bool {
	if s.retried || l.lc.ended || !s.hsSeen || s.written == 0 || s.conn.Status() != 0 {
		return false
	}
	var qe *genquic.Error
	if !errors.As(err, &qe) || !qe.App {
		return false
	}
	switch qe.Class {
	case genquic.ClassStreamReset:
		return qe.Code == h3RequestRejected
	case genquic.ClassPeerClosed:
		return qe.Code == h3NoError && s.conn.Requests() > 0
	}
	return false
}

// next gives s, which has no request in flight, its next one: the pending
// queue's first (open loop's due requests), else in closed loop a new one
// intended now; in open loop an idle slot waits in the ready ring.
func (l *h3LeanLoop) next(s *leanSlot, now int64) {
	switch {
	case l.lc.ended:
	case l.lc.hasPending():
		due, tgt := l.lc.popPending()
		l.startReq(s, due, tgt, now)
	case l.lc.open:
		if !s.queued {
			l.ready.push(s.idx)
			s.queued = true
		}
	case l.lc.stopping || l.lc.quotaSpent() || s.retryAt > now:
	default:
		s.retryAt = 0
		l.startReq(s, now, l.lc.closedTarget(), now)
	}
}

// tick runs the Conns' timers that are due and, every scanEvery, restarts
// closed-loop slots whose backoff has passed.
func (l *h3LeanLoop) tick(now int64) {
	if now >= l.timerAt {
		l.timers(now)
	}
	if now >= l.nextScan {
		l.nextScan = now + l.scanEvery
		if !l.lc.open {
			for i := range l.slots {
				if s := &l.slots[i]; !s.busy && s.retryAt != 0 && s.retryAt <= now {
					l.next(s, now)
				}
			}
		}
	}
}

// timers calls Timeout on every Conn whose deadline has passed and finds
// the next earliest deadline.
func (l *h3LeanLoop) timers(now int64) {
	t := l.at(now)
	l.timerAt = math.MaxInt64
	for i := range l.slots {
		s := &l.slots[i]
		if !s.open {
			continue
		}
		if d := s.conn.Deadline(); !d.IsZero() && !t.Before(d) {
			tx := l.socks[s.sock].tx
			out, _ := s.conn.Timeout(t, tx.Buf(leanDatagram))
			tx.Add(out)
			l.after(s, now)
			continue
		}
		l.arm(s)
	}
}

// wait sends what the pass queued, then sleeps until until, the next
// Conn deadline or the next scan, handling the datagrams that arrive.
func (l *h3LeanLoop) wait(now, until int64) {
	for _, s := range l.socks {
		s.tx.Flush()
	}
	l.waitEvents(now, min(until, l.timerAt), l)
}

// quiet: the loop never sleeps through its sockets' events (batched pacing
// still sends at its ticks; responses are read as they come).
func (l *h3LeanLoop) quiet() bool { return false }

// giveUp fails every request in flight as class (the drain is over, or the
// loop broke down); finish closes their connections.
func (l *h3LeanLoop) giveUp(now int64, class ErrorClass, err error) int {
	n := 0
	for i := range l.slots {
		s := &l.slots[i]
		if s.busy {
			s.busy = false
			l.lc.rec.fail(s.tgt, class, err, s.intended, now)
			n++
		}
	}
	l.busy = 0
	return n
}

// finish closes the connections still open (kept alive; after the drain
// nothing is in flight: giveUp) with a CONNECTION_CLOSE each, and sends
// what is queued.
func (l *h3LeanLoop) finish() {
	t := time.Now()
	for i := range l.slots {
		if s := &l.slots[i]; s.open {
			tx := l.socks[s.sock].tx
			tx.Add(s.conn.Close(t, tx.Buf(leanDatagram)))
			s.open = false
		}
	}
	for _, s := range l.socks {
		s.tx.Flush()
	}
}
