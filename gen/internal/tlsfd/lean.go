package tlsfd

import (
	"crypto/tls"
	"io"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/tls13"
)

// The lean TLS 1.3 handshake (package tls13) on the loop's sockets.
//
// With the lean handshake a Conn gets its keys without crypto/tls and
// without a coroutine: startLean sends the loop's ClientHello template
// (with a new random and session id), and each EPOLLIN runs stepLean, which
// reads what the socket has into the loop's read buffer and hands the
// whole records to the handshake, which appends what the client must send
// (its Finished flight, a second ClientHello after a HelloRetryRequest, an
// alert). A record cut off at the end of a read waits in the carry buffer,
// as after the handshake. When the server's Finished has been checked the
// connection switches to its own record layer, keyed from the handshake's
// application traffic keys; bytes read past the Finished stay in the carry
// for it. The client's Finished flight is held back and leaves in one write
// with the first request (one system call and one segment fewer per
// handshake; the server's work is the same).
//
// Conns and handshakes are reused through the loop's free lists, and
// the record layer lives inside the Conn, so a handshake allocates
// only what the standard library's AEAD constructors (and, for P-256,
// crypto/ecdh) do.

// leanSecure returns a Conn for fd from the loop's free list.
func (t *Loop) leanSecure(fd int) *Conn {
	var s *Conn
	if n := len(t.secFree); n > 0 {
		s = t.secFree[n-1]
		t.secFree = t.secFree[:n-1]
		out := s.out[:0]
		*s = Conn{own: s.own, out: out}
	} else {
		s = &Conn{}
	}
	s.fd, s.tl = fd, t
	return s
}

func (t *Loop) getHandshake() *tls13.Handshake {
	if n := len(t.hsFree); n > 0 {
		h := t.hsFree[n-1]
		t.hsFree = t.hsFree[:n-1]
		return h
	}
	return &tls13.Handshake{}
}

// releaseHandshake returns the lean handshake, if any, to the loop.
func (s *Conn) releaseHandshake() {
	if s.hs != nil {
		s.tl.hsFree = append(s.tl.hsFree, s.hs)
		s.hs = nil
	}
}

// startLean sends the ClientHello.
func (s *Conn) startLean() error {
	if s.tl.leanErr != nil {
		return s.tl.leanErr
	}
	s.hs = s.tl.getHandshake()
	out, err := s.hs.Start(s.tl.lean, s.tl.seal[:0])
	s.tl.seal = out[:0]
	if err != nil {
		return err
	}
	return s.send(out)
}

// errHandshakeEOF is the server's FIN before the handshake completed.
var errHandshakeEOF error = &Error{Msg: "tls: the server closed the connection during the handshake: EOF", Err: io.EOF}

// stepLean reads what the socket has and feeds the handshake. ended reports
// that the handshake is over, with its outcome in s.hsErr; err is a socket
// error.
func (s *Conn) stepLean(buf []byte) (ended bool, err error) {
	if err := s.Flush(); err != nil {
		return false, err
	}
	for {
		k := copy(buf, s.carry)
		n, err := s.readSock(buf[k:], false)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false, nil
		case err != nil:
			return false, err
		case n == 0:
			s.hsErr = errHandshakeEOF
			s.dropCarry()
			return true, nil
		}
		src := buf[:k+n]
		used, out, done, herr := s.hs.Read(src, s.tl.seal[:0])
		s.tl.seal = out[:0]
		switch {
		case done && herr == nil:
			// The client's Finished flight waits for the request: both
			// leave in one write (resumeHandshake flushes).
			s.out = append(s.out, out...)
		case len(out) > 0:
			if err := s.send(out); err != nil && herr == nil {
				return false, err
			}
		}
		if herr != nil {
			s.hsErr = herr
			s.dropCarry()
			return true, nil //nolint:nilerr // the handshake's failure is the outcome, in s.hsErr; err is for socket errors
		}
		if rest := src[used:]; len(rest) > 0 {
			if s.carry == nil {
				s.carry = s.tl.getCarry()
			}
			s.carry = append(s.carry[:0], rest...)
		} else {
			s.dropCarry()
		}
		if done {
			s.hsErr = s.useLean()
			return true, nil
		}
	}
}

// useLean switches to the connection's own record layer, keyed from the
// handshake's application traffic keys.
func (s *Conn) useLean() error {
	client, server := s.hs.ApplicationKeys()
	spec, _ := cipherSpecFor(tls.VersionTLS13, s.hs.Suite().ID)
	if err := s.own.reset13(spec, server, client); err != nil {
		return err
	}
	s.rec = &s.own
	s.phase = phaseRecords
	return nil
}
