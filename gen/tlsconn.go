package gen

import (
	"crypto/tls"
	"errors"
	"io"
	"iter"
	"net"
	"time"

	utls "github.com/refraction-networking/utls"
	"golang.org/x/sys/unix"
)

// TLS on the loop's own non-blocking sockets.
//
// crypto/tls (and uTLS) drive a handshake synchronously from Handshake().
// To keep every connection on its loop's pinned thread without blocking the
// loop, each handshake runs as a coroutine (iter.Pull): when the socket has
// nothing to read, the coroutine yields back to the loop, which resumes it
// on the next epoll event. Coroutine switches stay on the calling OS thread
// (the locked thread is handed over), so the handshake's CPU work happens on
// the loop's CPU.
//
// After the handshake, reads that find the socket empty return
// errWouldBlock, a temporary net.Error: crypto/tls keeps the connection
// usable after temporary errors and resumes the record on the next call.
// Writes never block: what the socket does not take is queued and flushed on
// EPOLLOUT, because crypto/tls treats any write error as fatal.

// errWouldBlock is returned by reads on an empty non-blocking socket.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

var errAborted = errors.New("handshake abandoned")

// tlsEngine is what crypto/tls.Conn and uTLS's UConn have in common here.
type tlsEngine interface {
	Handshake() error
	Read([]byte) (int, error)
	Write([]byte) (int, error)
}

// secureConn is a TLS session over one of the loop's sockets. Not safe for
// concurrent use: only its loop touches it.
type secureConn struct {
	fd    int
	eng   tlsEngine
	std   *tls.Conn
	uc    *utls.UConn
	out   []byte
	yield func(struct{}) bool
	next  func() (struct{}, bool)
	stop  func()
	hsErr error
}

func (c *tlsClient) newSecure(fd int) *secureConn {
	s := &secureConn{fd: fd}
	if c.std != nil {
		s.std = tls.Client(fdConn{s}, c.std)
		s.eng = s.std
		return s
	}
	s.uc = utls.UClient(fdConn{s}, c.u.Clone(), utls.HelloCustom)
	s.uc.ApplyPreset(c.freshSpec())
	s.eng = s.uc
	return s
}

func (s *secureConn) handshakeSeq(yield func(struct{}) bool) {
	s.yield = yield
	s.hsErr = s.eng.Handshake()
	s.yield = nil
}

func (s *secureConn) pendingOut() bool { return len(s.out) > 0 }

// flush writes queued bytes; a short write leaves the rest queued.
func (s *secureConn) flush() error {
	for len(s.out) > 0 {
		n, err := unix.Write(s.fd, s.out)
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return err
		}
		s.out = s.out[:copy(s.out, s.out[n:])]
	}
	return nil
}

func (s *secureConn) write(b []byte) (int, error) { return s.eng.Write(b) }
func (s *secureConn) read(b []byte) (int, error)  { return s.eng.Read(b) }

// release ends an unfinished handshake coroutine.
func (s *secureConn) release() {
	if s.stop != nil {
		s.stop()
		s.stop, s.next = nil, nil
	}
}

// fdConn is the net.Conn crypto/tls sees: the raw socket, non-blocking.
type fdConn struct{ s *secureConn }

func (c fdConn) Read(b []byte) (int, error) {
	s := c.s
	for {
		n, err := unix.Read(s.fd, b)
		switch {
		case err == unix.EAGAIN:
			if s.yield == nil {
				return 0, errWouldBlock
			}
			if !s.yield(struct{}{}) {
				return 0, errAborted
			}
			continue
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c fdConn) Write(b []byte) (int, error) {
	s := c.s
	if len(s.out) > 0 {
		s.out = append(s.out, b...)
		return len(b), nil
	}
	n, err := unix.Write(s.fd, b)
	if err == unix.EAGAIN {
		n, err = 0, nil
	}
	if err != nil {
		return 0, err
	}
	if n < len(b) {
		s.out = append(s.out, b[n:]...)
	}
	return len(b), nil
}

func (fdConn) Close() error                     { return nil } // the loop closes the socket
func (fdConn) LocalAddr() net.Addr              { return dummyAddr{} }
func (fdConn) RemoteAddr() net.Addr             { return dummyAddr{} }
func (fdConn) SetDeadline(time.Time) error      { return nil }
func (fdConn) SetReadDeadline(time.Time) error  { return nil }
func (fdConn) SetWriteDeadline(time.Time) error { return nil }

type dummyAddr struct{}

func (dummyAddr) Network() string { return "tcp" }
func (dummyAddr) String() string  { return "loadlab-socket" }

func isEOF(err error) bool { return err == io.EOF || errors.Is(err, io.EOF) }

// startHandshake begins the TLS handshake on a freshly connected socket.
func (l *loop) startHandshake(c *conn, now int64) {
	c.handshake = true
	s := l.r.tls.newSecure(c.fd)
	c.sec = s
	s.next, s.stop = iter.Pull(s.handshakeSeq)
	l.resumeHandshake(c, now)
}

// resumeHandshake runs the handshake until it needs the network again, and
// sends the request once it is done.
func (l *loop) resumeHandshake(c *conn, now int64) {
	s := c.sec
	if s.pendingOut() {
		if err := s.flush(); err != nil {
			l.fail(c, classify(err), err, now)
			return
		}
	}
	if _, more := s.next(); more {
		if s.pendingOut() {
			if err := s.flush(); err != nil {
				l.fail(c, classify(err), err, now)
			}
		}
		return
	}
	s.stop()
	s.next, s.stop = nil, nil
	c.handshake = false
	if err := s.hsErr; err != nil {
		class := ErrTLS
		var errno unix.Errno
		switch {
		case errors.As(err, &errno):
			class = classify(errno)
		case isEOF(err):
			class = ErrClosed
		}
		l.fail(c, class, err, now)
		return
	}
	if s.pendingOut() {
		if err := s.flush(); err != nil {
			l.fail(c, classify(err), err, now)
			return
		}
	}
	done := l.now()
	if c.intended >= l.r.warmup {
		l.rec.handshakes++
		record(l.rec.handshake, (done-c.connStart)/1000)
	}
	l.noteSession(c, s)
	l.writeRequest(c, done)
}

// noteSession counts resumptions and captures the negotiated parameters.
func (l *loop) noteSession(c *conn, s *secureConn) {
	if s.std != nil {
		st := s.std.ConnectionState()
		if st.DidResume && c.intended >= l.r.warmup {
			l.rec.resumed++
		}
		l.r.tls.capture(st.Version, st.CipherSuite, st.CurveID, st.NegotiatedProtocol, st.PeerCertificates)
		return
	}
	st := s.uc.ConnectionState()
	if st.DidResume && c.intended >= l.r.warmup {
		l.rec.resumed++
	}
	l.r.tls.capture(st.Version, st.CipherSuite, 0, st.NegotiatedProtocol, st.PeerCertificates)
}
