package gen

import "github.com/loadlab/loadlab/gen/internal/sock"

// poller is the TCP loop's I/O seam: how a slot's new socket is
// registered and connected, the byte stream a connected socket reads and
// writes through, how it is closed, how the loop sleeps until something
// arrives, and when the response just read arrived. epollPoller (epoll.go)
// and uringPoller (uringio.go) implement it; the loop (tcploop.go) and the
// protocols never ask which one they have. Not safe for concurrent use:
// only the loop's thread calls it.
type poller interface {
	// connect registers fd, ss's new socket (bound, not yet connected),
	// and starts connecting it to the target: connected reports a connect
	// that completed at once, else an event says when it does.
	connect(ss *socketSlot, fd int) (connected bool, class ErrorClass, err error)
	// connectResult is the outcome of ss's connect in progress, once an
	// event said it ended.
	connectResult(ss *socketSlot) error
	// stream is the byte stream of ss's connected socket: TLS over it for
	// https://, else the socket itself.
	stream(ss *socketSlot) sock.Stream
	// closeSocket closes ss's socket fd, after what was queued for it.
	closeSocket(ss *socketSlot, fd int)
	// wait sleeps until until (ns on the run's clock) at the latest, or
	// the next timeout scan, and hands every event that arrives to h.
	// Batched pacing: if quiet() once the events already in are handled,
	// it sleeps through socket events until the deadline.
	wait(now, until int64, h handler, quiet func() bool)
	// arrival is when the bytes just read arrived, the kernel's receive
	// timestamp on the wall clock, ns (batched pacing; 0: not known).
	arrival() int64
	// close releases the poller's descriptors (the slots' sockets are
	// closed before).
	close()
}
