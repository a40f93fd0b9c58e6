package tcploop

import (
	"fmt"
	"time"

	"github.com/loadlab/loadlab/gen/internal/run"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/sock"
)

// uringPoller is the TCP loop's I/O on io_uring (Config.IO uring): the
// loop's ring, whose completions the loop handles as epoll's events
// (uringIO.complete says which bits each one stands for).
type uringPoller struct {
	l     *Loop
	u     *uringIO
	socks []uringSock // by slot index: each slot's socket on the ring
}

// newUringPoller makes the loop's ring on its locked thread, with the
// wake-up eventfd the other goroutines write to.
func newUringPoller(l *Loop) (*uringPoller, error) {
	u, err := newUringIO(l.nslots, l.batch, l.LC.R.Dst, l.wakefd)
	if err != nil {
		return nil, fmt.Errorf("{IO} uring: %w (use {IO} epoll)", err)
	}
	u.fault = l.LC.R.Spec.UringFault
	return &uringPoller{l: l, u: u, socks: make([]uringSock, l.nslots)}, nil
}

func (p *uringPoller) close() { p.u.close() }

// connect queues the connect on the ring: its completion says how it
// went (connectResult).
func (p *uringPoller) connect(ss *Slot, fd int) (bool, run.ErrorClass, error) {
	p.u.connect(&p.socks[ss.Idx], fd, ss.Idx, ss.Gen)
	return false, 0, nil
}

func (p *uringPoller) connectResult(ss *Slot) error { return p.socks[ss.Idx].connErr }

// stream is the socket on the ring, with TLS over it for https://.
func (p *uringPoller) stream(ss *Slot) sock.Stream {
	if p.l.tls != nil {
		return p.l.tls.NewConnVia(ss.Fd, &p.socks[ss.Idx])
	}
	return &p.socks[ss.Idx]
}

// closeSocket closes fd through the ring, after what it queued for it,
// when the ring has the socket; else at once.
func (p *uringPoller) closeSocket(ss *Slot, fd int) {
	if s := &p.socks[ss.Idx]; s.u != nil && s.fd == fd {
		p.u.closeSock(s)
		return
	}
	unix.Close(fd)
}

func (p *uringPoller) arrival() int64 { return p.u.take() }

// wait is the loop's wait on the ring: one io_uring_enter submits what the
// round queued and sleeps until a completion or the deadline.
//
// Batched pacing: the completions the last sleep ended with are handled
// first (their data keeps its receive time); then, if h.Quiet(), the loop
// sleeps through completions until the deadline, asking the kernel for
// more completions than can come, so that only the deadline (or a signal)
// ends the sleep.
//
// The deadline is io_uring_enter's own timeout, not an IORING_OP_TIMEOUT
// request kept at it (measured side by side, issue 22: a tie on CPU per
// request, the lag's median about 5 µs later). A batched sleep could not
// rely on such a request anyway: one that fires between the clock reading
// and the kernel's start of the wait does not end a wait for more
// completions (Linux 6.18 counts fired timeouts from the start of the
// wait), so the sleep would need this timeout as a backstop.
//
// A ring that failed (this round or before it, in sqe or enter) breaks
// the loop down: the run ends with the failure (lifecycle.breakDown).
func (p *uringPoller) wait(now, until int64, h Handler) {
	l, u := p.l, p.u
	at := min(until, l.NextScan)
	if l.batch {
		l.setWallOff()
		u.reap(h)
		if h.Quiet() {
			u.enter(u.ring.CQEntries(), at-l.LC.Now())
			p.failed()
			return
		}
		now = l.LC.Now()
	}
	u.enter(1, at-now)
	if l.batch {
		l.setWallOff()
	}
	u.reap(h)
	p.failed()
}

// failed hands the ring's failure, if any, to the lifecycle.
func (p *uringPoller) failed() {
	if l := p.l; p.u.err != nil && l.LC.Broken == nil {
		l.LC.Broken = fmt.Errorf("the io_uring loop on CPU %d: %w", l.LC.CPU, p.u.err)
	}
}

// setWallOff notes the wall clock's offset from the run's clock, which
// turns receive timestamps into the run's time.
func (l *Loop) setWallOff() {
	t := time.Now()
	l.wallOff = t.UnixNano() - int64(t.Sub(l.LC.R.Start))
}
