package gen

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"unsafe"

	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/internal/uring"
	"golang.org/x/sys/unix"
)

// The io_uring path of the TCP loops (--io uring). The loop keeps its
// readiness-shaped driver (handler.event with epoll bits) and its byte
// stream seam (sock); underneath, each connected socket has a multishot
// receive armed into the loop's provided buffer ring, sends are submitted
// from the socket's own copy of the bytes, connects go through the ring,
// and every wakeup is one io_uring_enter that submits what the last round
// queued and waits for the next completions (its timeout is the pacing
// deadline: no timerfd, no epoll). A completion becomes the event the
// driver already handles: data or the end of the stream is EPOLLIN (the
// stream's read then serves the buffers the kernel filled, and EAGAIN once
// they are used up), a connect's or send's completion is EPOLLOUT, an error
// EPOLLERR.
//
// Receive timestamps: with a pacing tolerance the loop may reap a response
// long after it arrived, so the receive is a multishot RECVMSG and each
// buffer carries the SO_TIMESTAMPNS of its data, which doneAt uses as the
// epoll path uses recvmsg's. At tolerance 0 the loop wakes for every
// completion and the receive is a plain multishot RECV.
//
// Not done: linking each HTTP/1.1 request's send to a single-shot receive
// of its response with the send's completion skipped (IOSQE_IO_LINK +
// CQE_SKIP_SUCCESS; commit 6974dda, branch ulink-wip, passes IO_TESTS).
// It saves the send's completion but arms a receive, and its poll, per
// request where the multishot receive stays armed, and it leaves idle
// connections unwatched (an idle close shows at the next request, as a
// retry). bench-gen's rows, linked/multishot CPU per request, median of 10
// alternated rounds over two passes (ranges of the per-round ratios):
// closed-1k 1.04 (0.83-1.18; the quieter pass 1.03-1.15), rate-1k at
// tolerance 0 0.99 (0.78-1.16), at 1 ms 1.02 (0.91-1.44), closed-1m 0.99
// (0.83-1.13): no row gained beyond the noise. The floor agrees:
// floor-uring-link/floor-uring 1.01 (closed-1k) and 1.00 (closed-1m).

// Operations, in a completion's user data: op<<56 | gen(24 bits)<<32 | slot.
const (
	uopRecv = iota + 1
	uopSend
	uopConnect
	uopCancel
	uopWake
)

const ugenMask = 1<<24 - 1

func uud(op int, idx, gen int32) uint64 {
	return uint64(op)<<56 | uint64(uint32(gen)&ugenMask)<<32 | uint64(uint32(idx))
}

// uringFeatures is the io_uring probe, made once per process.
var uringFeatures = sync.OnceValue(uring.Probe)

// uringIO is a loop's ring: created on the loop's locked thread (the ring
// is SINGLE_ISSUER), used only there.
type uringIO struct {
	ring   *uring.Ring
	bufs   *uring.BufRing
	stamps bool        // multishot RECVMSG with SO_TIMESTAMPNS (batched pacing)
	msg    unix.Msghdr // the RECVMSG shape: control space only
	last   int64       // wall ns of the last read buffer's data (stamps), 0 = none

	dst    [unix.SizeofSockaddrInet6]byte // the target, raw, for CONNECT
	dstLen uint32

	socks  []*uringSock // by slot index: the slot's socket state
	rearm  []*uringSock // receives the buffer group ran dry for
	wakefd int
	wakeb  [8]byte

	err   error                   // sticky: the ring failed (sqe, enter); the loop ends the run with it
	spare uring.SQE               // what sqe hands out once the ring failed: filled, never submitted
	fault func(call string) error // tests: Config.uringFault
}

const uringCtrl = 64 // control space per RECVMSG buffer: one SCM_TIMESTAMPNS

// uringBufBytes bounds the provided buffers of one loop's ring.
const uringBufBytes = 8 << 20

// newUringIO makes the ring of a loop with conns connection slots.
func newUringIO(conns int, stamps bool, dst netip.AddrPort, wakefd int) (*uringIO, error) {
	u := &uringIO{stamps: stamps, wakefd: wakefd}
	sq := pow2(min(max(2*conns+16, 64), 4096))
	r, err := uring.New(uint32(sq), uint32(4*sq), uring.LoopFlags)
	if err != nil {
		return nil, err
	}
	u.ring = r
	size := 64 << 10
	switch {
	case conns > 1024:
		size = 4 << 10
	case conns > 64:
		size = 16 << 10
	}
	// Two buffers a connection, at most uringBufBytes of them a loop: at
	// 10,000 connections, 2 x 4 KiB each would hold 32 MiB per loop (make
	// test's TestGenMemory10k: 106 MB against epoll's 41). A group that
	// runs dry ends its multishot receives, which are re-armed (rearm).
	if u.bufs, err = r.NewBufRing(0, pow2(min(max(2*conns, 64), uringBufBytes/size)), size); err != nil {
		r.Close()
		return nil, err
	}
	u.msg.Controllen = uringCtrl
	if dst.Addr().Is4() {
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&u.dst[0]))
		sa.Family = unix.AF_INET
		sa.Addr = dst.Addr().As4()
		sa.Port = htons(dst.Port())
		u.dstLen = unix.SizeofSockaddrInet4
	} else {
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&u.dst[0]))
		sa.Family = unix.AF_INET6
		sa.Addr = dst.Addr().As16()
		sa.Port = htons(dst.Port())
		u.dstLen = unix.SizeofSockaddrInet6
	}
	u.sqe().PrepPollMultishot(wakefd, unix.POLLIN, uud(uopWake, 0, 0))
	return u, nil
}

func htons(p uint16) uint16 { return p>>8 | p<<8 }

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func (u *uringIO) close() {
	u.ring.Submit() //nolint:errcheck // teardown: the ring is closed next whatever the submit says; the sockets' closes
	u.bufs.Close()
	u.ring.Close()
}

// connect starts connecting fd (slot idx, socket generation gen) through
// the ring; its completion is the slot's EPOLLOUT.
func (u *uringIO) connect(s *uringSock, fd int, idx, gen int32) {
	s.open(u, fd, idx, gen)
	for int(idx) >= len(u.socks) {
		u.socks = append(u.socks, nil)
	}
	u.socks[idx] = s
	u.sqe().PrepConnect(fd, unsafe.Pointer(&u.dst[0]), u.dstLen, uud(uopConnect, idx, gen))
	s.connecting = true
}

// sqe returns a free submission entry, submitting what is queued when the
// queue is full. A ring that refuses even that is broken beyond the run's
// repair: sqe records the failure (u.err, which ends the run at the end of
// the loop's round) and returns a spare entry that is never submitted, so
// the callers need no error path of their own.
func (u *uringIO) sqe() *uring.SQE {
	if u.err == nil {
		var err error
		if u.fault != nil {
			err = u.fault("sqe") // as if the queue were full and the kernel refused it
		}
		if err == nil {
			if s := u.ring.GetSQE(); s != nil {
				return s
			}
			for try := 0; try < 3; try++ {
				if _, err = u.ring.Submit(); err != unix.EINTR {
					break
				}
			}
			if err == nil {
				if s := u.ring.GetSQE(); s != nil {
					return s
				}
				err = errSQFull
			}
		}
		u.fail(fmt.Errorf("io_uring: the submission queue is full and io_uring_enter would not take it: %w", err))
	}
	u.spare = uring.SQE{}
	return &u.spare
}

var errSQFull = errors.New("the kernel took none of the queued entries")

// fail records the ring's first failure: the loop ends the run with it
// (see uringPoller.failed).
func (u *uringIO) fail(err error) {
	if u.err == nil {
		u.err = fmt.Errorf("%w; the run stopped early: use {IO} epoll", err)
	}
}

// arm starts the socket's multishot receive.
func (u *uringIO) arm(s *uringSock) {
	ud := uud(uopRecv, s.idx, s.gen)
	if u.stamps {
		u.sqe().PrepRecvmsgMultishot(s.fd, &u.msg, u.bufs.Group, ud)
	} else {
		u.sqe().PrepRecvMultishot(s.fd, u.bufs.Group, ud)
	}
	s.armed = true
}

// enter submits what is queued and waits up to ns for min completions
// (min 0: none; the kernel still runs what completed, so it shows). A ring
// that failed is not entered again.
func (u *uringIO) enter(min uint32, ns int64) {
	if u.err != nil {
		return
	}
	if ns < 0 {
		ns = 0
	}
	var err error
	if u.fault != nil {
		err = u.fault("enter")
	}
	if err == nil {
		_, err = u.ring.SubmitAndWait(min, ns)
	}
	switch err {
	case nil, unix.EINTR, unix.EBUSY, unix.EAGAIN:
		// EINTR: a signal (the runtime's preemption); EBUSY, EAGAIN: the
		// completion queue overflowed and must be reaped first.
	default:
		u.fail(fmt.Errorf("io_uring_enter: %w", err))
	}
}

// reap hands the ready completions to h.
func (u *uringIO) reap(h handler) int {
	n := 0
	for c := u.ring.PeekCQE(); c != nil; c = u.ring.PeekCQE() {
		cqe := *c
		u.ring.Advance(1)
		n++
		u.complete(&cqe, h)
	}
	for _, s := range u.rearm {
		if s.armWanted {
			s.armWanted = false
			u.arm(s)
		}
	}
	u.rearm = u.rearm[:0]
	u.bufs.Publish()
	return n
}

// complete applies one completion to its socket and tells the driver.
func (u *uringIO) complete(c *uring.CQE, h handler) {
	op, idx := int(c.UserData>>56), int32(uint32(c.UserData))
	gen := uint32(c.UserData>>32) & ugenMask
	if op == uopWake {
		unix.Read(u.wakefd, u.wakeb[:])
		if !c.More() {
			u.sqe().PrepPollMultishot(u.wakefd, unix.POLLIN, uud(uopWake, 0, 0))
		}
		return
	}
	var s *uringSock
	if int(idx) < len(u.socks) {
		s = u.socks[idx]
	}
	if s == nil || s.fd < 0 || uint32(s.gen)&ugenMask != gen {
		// A completion of a socket closed since: give its buffer back.
		if id, ok := c.Buffer(); ok {
			u.bufs.Recycle(id)
		}
		return
	}
	var ev uint32
	switch op {
	case uopConnect:
		s.connecting = false
		if c.Res < 0 {
			s.connErr = unix.Errno(-c.Res)
			ev = unix.EPOLLOUT | unix.EPOLLERR
			break
		}
		u.arm(s)
		ev = unix.EPOLLOUT
	case uopRecv:
		ev = s.received(c)
	case uopSend:
		ev = s.sent(c)
	default:
		return
	}
	if ev != 0 {
		h.event(s.idx, s.gen, ev)
	}
}

// closeSock cancels what the socket has in flight (a pending request holds
// the file open) and closes it through the ring: its descriptor stays taken
// until the entries already queued for it have run, so a new socket cannot
// get its number and their bytes.
func (u *uringIO) closeSock(s *uringSock) {
	if u.err == nil {
		if s.armed {
			u.cancel(uud(uopRecv, s.idx, s.gen))
		}
		if s.sending {
			u.cancel(uud(uopSend, s.idx, s.gen))
			s.tx = nil // the kernel may still read it: the next socket gets its own
		}
		if s.connecting {
			u.cancel(uud(uopConnect, s.idx, s.gen))
		}
	}
	s.Release()
	if u.err == nil {
		c := u.sqe()
		if u.err == nil {
			c.PrepClose(s.fd, uud(uopCancel, 0, 0))
			c.Flags |= uring.SqeCQESkipSuccess
			s.fd = -1
			return
		}
	}
	// The ring failed (before or just now, its entries for this socket
	// included): close the socket here; the ring's own close ends what it
	// still holds of it.
	unix.Close(s.fd)
	s.fd = -1
}

func (u *uringIO) cancel(target uint64) {
	s := u.sqe()
	s.PrepCancel(target, uud(uopCancel, 0, 0))
	s.Flags |= uring.SqeCQESkipSuccess
}

// uringSock is a connected socket on the ring and its byte stream (the
// plain one; TLS runs over it). The loop owns it; not safe for concurrent
// use.
type uringSock struct {
	u        *uringIO
	fd       int
	idx, gen int32

	connecting bool
	connErr    error
	armed      bool // the multishot receive is in flight
	armWanted  bool // it ended for lack of buffers: rearm after the round
	eof        bool
	err        error // sticky: the receive or a send failed

	rx    []ubuf // buffers received, not yet read; rxOff into rx[0]
	rxOff int

	tx      []byte // the bytes of the send in flight
	sending bool
	txq     []byte // bytes written while a send is in flight
}

// ubuf is one received buffer: its id in the ring, payload bounds within
// the buffer, and the arrival time of its data (stamps).
type ubuf struct {
	id       uint16
	off, end int
	at       int64
}

func (s *uringSock) open(u *uringIO, fd int, idx, gen int32) {
	s.u, s.fd, s.idx, s.gen = u, fd, idx, gen
	s.connecting, s.connErr, s.armed, s.armWanted, s.eof, s.err = false, nil, false, false, false, nil
	s.rx, s.rxOff = s.rx[:0], 0
	s.tx, s.txq, s.sending = s.tx[:0], s.txq[:0], false
}

// received takes a receive completion; it returns the driver's event.
func (s *uringSock) received(c *uring.CQE) uint32 {
	if !c.More() {
		s.armed = false
	}
	switch {
	case c.Res > 0:
		id, ok := c.Buffer()
		if !ok {
			s.err = unix.EIO
			return unix.EPOLLERR
		}
		b := ubuf{id: id, end: int(c.Res)}
		if s.u.stamps {
			control, payload, ok := uring.ParseRecvmsg(s.u.bufs.Buf(id, int(c.Res)), 0, uringCtrl)
			if !ok {
				s.u.bufs.Recycle(id)
				s.err = unix.EIO
				return unix.EPOLLERR
			}
			b.off = int(c.Res) - len(payload)
			b.at = uring.TimestampNs(control)
		}
		s.rx = append(s.rx, b)
		if !s.armed {
			s.rearm()
		}
		return unix.EPOLLIN
	case c.Res == 0:
		s.eof = true
		return unix.EPOLLIN | unix.EPOLLRDHUP
	case c.Res == -int32(unix.ENOBUFS):
		s.rearm()
		return 0
	default:
		s.err = unix.Errno(-c.Res)
		return unix.EPOLLIN | unix.EPOLLERR
	}
}

// rearm asks for the receive again once this round's buffers are back.
func (s *uringSock) rearm() {
	if !s.armWanted {
		s.armWanted = true
		s.u.rearm = append(s.u.rearm, s)
	}
}

// sent takes a send completion: the next queued bytes go out.
func (s *uringSock) sent(c *uring.CQE) uint32 {
	s.sending = false
	if c.Res < 0 {
		s.err = unix.Errno(-c.Res)
		return unix.EPOLLOUT | unix.EPOLLERR
	}
	if len(s.txq) > 0 {
		s.tx, s.txq = s.txq, s.tx[:0]
		s.submitSend()
	}
	return unix.EPOLLOUT
}

func (s *uringSock) submitSend() {
	s.u.sqe().PrepSend(s.fd, s.tx, unix.MSG_WAITALL|unix.MSG_NOSIGNAL, uud(uopSend, s.idx, s.gen))
	s.sending = true
}

// The sock.Stream methods.

func (s *uringSock) Handshake([]byte) (bool, error) { return true, nil }
func (s *uringSock) Resumed() bool                  { return false }

// Read copies what the kernel received, oldest first: EAGAIN once it is
// all read and the socket is still open.
func (s *uringSock) Read(b []byte) (int, error) {
	if len(s.rx) == 0 {
		switch {
		case s.err != nil:
			return 0, s.err
		case s.eof:
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	h := &s.rx[0]
	data := s.u.bufs.Buf(h.id, h.end)[h.off+s.rxOff:]
	n := copy(b, data)
	s.rxOff += n
	s.u.last = h.at
	if n == len(data) {
		s.u.bufs.Recycle(h.id)
		s.rxOff = 0
		copy(s.rx, s.rx[1:])
		s.rx = s.rx[:len(s.rx)-1]
	}
	return n, nil
}

// View returns the oldest unread received bytes in place (b is not
// used), as Read's results otherwise: (nil, EAGAIN) when there are none,
// (nil, nil) at the end of the stream. The bytes stay valid until the loop
// next reaps (the buffer goes back to the kernel only then).
func (s *uringSock) View([]byte) ([]byte, error) {
	if len(s.rx) == 0 {
		_, err := s.Read(nil)
		return nil, err
	}
	h := &s.rx[0]
	data := s.u.bufs.Buf(h.id, h.end)[h.off+s.rxOff:]
	s.u.last = h.at
	s.u.bufs.Recycle(h.id)
	s.rxOff = 0
	copy(s.rx, s.rx[1:])
	s.rx = s.rx[:len(s.rx)-1]
	return data, nil
}

// DrainsOnShortRead: no, the buffers are read to EAGAIN (no system call).
func (s *uringSock) DrainsOnShortRead() bool { return false }

// Write queues b for the kernel (copied: the caller may reuse it at once)
// and reports it all taken, or nothing (EAGAIN) while sock.MaxQueued bytes
// or more wait for the send in flight; a failure shows at the send's completion, as
// EPOLLERR and the error of the next read or write.
func (s *uringSock) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(b) == 0 {
		return 0, nil
	}
	if s.sending {
		if len(s.txq) >= sock.MaxQueued {
			return 0, unix.EAGAIN // the send's completion is EPOLLOUT
		}
		s.txq = append(s.txq, b...)
		return len(b), nil
	}
	s.tx = append(s.tx[:0], b...)
	s.submitSend()
	return len(b), nil
}

// Pending: bytes wait for the send in flight (its completion sends them).
func (s *uringSock) Pending() bool { return len(s.txq) > 0 }
func (s *uringSock) Flush() error  { return s.err }

// Release gives the unread buffers back.
func (s *uringSock) Release() {
	for _, b := range s.rx {
		s.u.bufs.Recycle(b.id)
	}
	s.rx, s.rxOff = s.rx[:0], 0
}

// take returns the arrival time of the last data read once (stamps).
func (u *uringIO) take() int64 {
	t := u.last
	u.last = 0
	return t
}

// noUring makes the io_uring probe fail, so tests can run the fallback.
var noUring bool

// defaultIO is what an unset Config.IO means: DefaultIO, except in the
// package's tests, which run under each path (LOADLAB_TEST_IO, TestMain).
var defaultIO = DefaultIO

// chooseIO settles Config.IO for the TCP engines: what the loops use, and
// why (generator.io_note).
func chooseIO(r *run) (io, note string, err error) {
	cfg := r.cfg
	asked := cfg.IO
	if asked == "" {
		asked = defaultIO
	}
	if asked == IOEpoll {
		return IOEpoll, "epoll: asked for ({IO} epoll)", nil
	}
	f := uringFeatures()
	if noUring {
		f = uring.Features{Err: errors.New("io_uring_setup: turned off by the test")}
	}
	why := ""
	switch {
	case len(f.Missing()) > 0:
		why = f.String()
	}
	if why != "" {
		if cfg.IO == IOUring {
			return "", "", fieldErr("IO", "uring: %s; use {IO} epoll (or auto, which falls back to it)", why)
		}
		return IOEpoll, "epoll: {IO} auto fell back from io_uring: " + why, nil
	}
	if asked == IOUring {
		return IOUring, "io_uring: asked for ({IO} uring); " + f.String(), nil
	}
	if cfg.HTTP2 {
		// bench-h2.sh, uring/epoll per round: the open loop at 1 ms 1.17
		// 1.23 1.22 on a quiet machine (2026-12-02); the closed loop 0.94
		// 0.89 1.00 there but 0.98-1.32 on a busy one (2026-12-01).
		return IOEpoll, "epoll: {IO} auto keeps epoll for HTTP/2, where io_uring cost more in bench-h2.sh's paced open loop (uring/epoll 1.17-1.23) and its closed-loop gain did not hold from run to run ({IO} uring to use it; " + f.String() + ")", nil
	}
	if cfg.openLoop() && cfg.PacingTolerance == 0 {
		// bench-gen.sh on a quiet machine (2026-12-02, 3 alternated
		// rounds): rate-1k at tolerance 0, uring/epoll 1.13 1.08 1.13:
		// every request is its own wakeup, and io_uring_enter's wait
		// costs more than epoll_pwait2's.
		return IOEpoll, "epoll: {IO} auto keeps epoll for an open loop at pacing tolerance 0, where io_uring cost more in bench-gen.sh (uring/epoll 1.08-1.13; {IO} uring to use it; " + f.String() + ")", nil
	}
	// bench-gen.sh on a quiet machine (2026-12-02), uring/epoll per round:
	// rate-1k at 1 ms 1.08 0.98 0.93, closed-1k 1.04 1.11 0.94, closed-1m
	// 1.02 0.90 0.94 (ties within the noise); the lab's ceilings at
	// 32,000 req/s over its veth, 1 ms: generator busy 0.28-0.43 against
	// epoll's 0.41-0.42.
	return IOUring, "io_uring: {IO} auto takes it for HTTP/1.1 closed loops and paced open loops, where it cost no more than epoll in bench-gen.sh and less in the lab; " + f.String(), nil
}
