package gen

import "golang.org/x/sys/unix"

// sock is a connection's byte stream, as wrk's struct sock: the socket
// itself, or TLS over it (secureConn, tlsconn.go). The connection code reads
// and writes through it and never asks which; the choice is made once per
// socket, when it connects. Not safe for concurrent use: only its loop
// touches it.
type sock interface {
	// handshake advances the setup after the TCP connect (the TLS
	// handshake) and reports done once application data may flow. buf is
	// the loop's read buffer. A plain socket is done at once.
	handshake(buf []byte) (done bool, err error)
	// resumed reports whether the finished handshake resumed a session.
	resumed() bool
	// read returns application bytes in b: errWouldBlock (or EAGAIN) when
	// the socket has nothing, (0, nil) at the end of the stream (FIN, or
	// TLS close_notify).
	read(b []byte) (int, error)
	// drainsOnShortRead reports whether a read shorter than b means the
	// socket is empty, so an edge-triggered loop may wait for the next edge
	// (plain TCP); TLS may hold whole records back and is read to EAGAIN.
	drainsOnShortRead() bool
	// write sends from b and returns how much it took; EAGAIN when the
	// socket took nothing. TLS takes all of b, sealing it, and queues what
	// the socket does not take for flush.
	write(b []byte) (int, error)
	// pending reports bytes queued for flush; flush writes them (what the
	// socket does not take stays queued).
	pending() bool
	flush() error
	// release drops what the stream holds besides the descriptor, which
	// the connection closes.
	release()
}

// plainSock is a plain TCP socket. Its methods are the raw system calls;
// with rx set reads are recvmsg calls that keep the receive timestamp.
type plainSock struct {
	fd int
	rx *rxReader
}

func (s *plainSock) handshake([]byte) (bool, error) { return true, nil }
func (s *plainSock) resumed() bool                  { return false }
func (s *plainSock) read(b []byte) (int, error) {
	if s.rx != nil {
		return s.rx.read(s.fd, b)
	}
	return rawRead(s.fd, b)
}
func (s *plainSock) drainsOnShortRead() bool     { return true }
func (s *plainSock) write(b []byte) (int, error) { return rawWrite(s.fd, b) }
func (s *plainSock) pending() bool               { return false }
func (s *plainSock) flush() error                { return nil }
func (s *plainSock) release()                    {}

// notReady reports whether a sock's read or write found the socket not
// ready.
func notReady(err error) bool { return err == unix.EAGAIN || err == errWouldBlock }
