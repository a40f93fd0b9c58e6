// Package sock is the seam between a connection and its byte stream, as
// wrk's struct sock: the socket itself (Plain), or TLS over it (package
// tlsfd). The connection code of the TCP loops reads and writes through a
// Stream and never asks which; the choice is made once per socket, when it
// connects.
//
// Imports: only gen/internal/rawio among loadlab's packages.
package sock

import (
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/rawio"
)

// Stream is a connection's byte stream. Not safe for concurrent use: only
// its loop touches it.
type Stream interface {
	// Handshake advances the setup after the TCP connect (the TLS
	// handshake) and reports done once application data may flow. buf is
	// the loop's read buffer. A plain socket is done at once.
	Handshake(buf []byte) (done bool, err error)
	// Resumed reports whether the finished handshake resumed a session.
	Resumed() bool
	// Read returns application bytes in b: ErrWouldBlock (or EAGAIN) when
	// the socket has nothing, (0, nil) at the end of the stream (FIN, or
	// TLS close_notify).
	Read(b []byte) (int, error)
	// View is Read that may lend its own bytes instead of copying them:
	// what it returns is b[:n] after a Read into b, or a buffer of the
	// stream's (io_uring's received buffer, valid until the loop next
	// waits). Its errors are Read's.
	View(b []byte) ([]byte, error)
	// DrainsOnShortRead reports whether a read shorter than b means the
	// socket is empty, so an edge-triggered loop may wait for the next edge
	// (plain TCP); TLS may hold whole records back and is read to EAGAIN.
	DrainsOnShortRead() bool
	// Write sends from b and returns how much it took; EAGAIN when the
	// socket took nothing. TLS takes all of b, sealing it, and queues what
	// the socket does not take for Flush (io_uring's socket queues what
	// waits for the send in flight); once MaxQueued bytes wait, Write takes
	// nothing (EAGAIN) until they go.
	Write(b []byte) (int, error)
	// Pending reports bytes queued for Flush; Flush writes them (what the
	// socket does not take stays queued).
	Pending() bool
	Flush() error
	// Release drops what the stream holds besides the descriptor, which
	// the connection closes.
	Release()
}

// MaxQueued bounds the bytes a Stream queues beyond what its socket took:
// past it Write takes nothing, so a server that does not read stops the
// writer (the protocol above bounds its own queue) instead of growing a
// queue here. One Write may go past it by its own length.
const MaxQueued = 256 << 10

// ErrWouldBlock is returned by reads on an empty non-blocking socket.
var ErrWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// NotReady reports whether a Stream's Read or Write found the socket not
// ready.
func NotReady(err error) bool { return err == unix.EAGAIN || err == ErrWouldBlock }

// Plain is a plain TCP socket. Its methods are the raw system calls; with
// Rx set reads are recvmsg calls that keep the receive timestamp.
type Plain struct {
	Fd int
	Rx *rawio.RxReader
}

func (s *Plain) Handshake([]byte) (bool, error) { return true, nil }
func (s *Plain) Resumed() bool                  { return false }
func (s *Plain) Read(b []byte) (int, error) {
	if s.Rx != nil {
		return s.Rx.Read(s.Fd, b)
	}
	return rawio.Read(s.Fd, b)
}
func (s *Plain) View(b []byte) ([]byte, error) { return ReadView(s, b) }
func (s *Plain) DrainsOnShortRead() bool       { return true }
func (s *Plain) Write(b []byte) (int, error)   { return rawio.Write(s.Fd, b) }
func (s *Plain) Pending() bool                 { return false }
func (s *Plain) Flush() error                  { return nil }
func (s *Plain) Release()                      {}

// ReadView is View for a stream that has no bytes of its own to lend: a
// Read into b.
func ReadView(s Stream, b []byte) ([]byte, error) {
	n, err := s.Read(b)
	return b[:max(n, 0)], err
}
