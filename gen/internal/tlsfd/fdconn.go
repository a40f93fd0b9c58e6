package tlsfd

import (
	"io"
	"net"
	"time"

	"github.com/loadlab/loadlab/gen/internal/sock"

	"golang.org/x/sys/unix"
)

// fdConn is the net.Conn crypto/tls sees: the raw socket, non-blocking.
//
// Until the connection switches to our record layer, reads hand crypto/tls
// at most one TLS record per call (first the 5-byte header, then the body),
// so crypto/tls never holds bytes past the record it is working on; partial
// reads carry over EAGAIN (a yield during the handshake, sock.ErrWouldBlock after
// it). fdConn also counts the records each way since the last
// ChangeCipherSpec, which are the sequence numbers our record layer starts
// from, and keeps the start of the server's first handshake message for the
// ServerHello random (TLS 1.2 key expansion). Once crypto/tls keeps the
// connection for good (phaseLib), reads are plain.
type fdConn struct{ s *Conn }

// fdState is fdConn's per-connection state.
type fdState struct {
	hdr    [recordHeaderLen]byte // header of the record being read
	hdrN   int                   // header bytes read from the socket
	hdrOut int                   // header bytes handed to crypto/tls
	left   int                   // body bytes still to read

	in, out    recordCounter
	hello      [38]byte // the server's handshake stream, up to the random
	helloN     int
	libReading bool // crypto/tls is inside Read after the handshake: what it writes answers the server
}

// recordCounter follows the record boundaries of a byte stream.
type recordCounter struct {
	hdr      [recordHeaderLen]byte
	hdrN     int
	left     int
	sinceCCS uint64 // records completed since the last ChangeCipherSpec
}

// feed advances over b.
func (r *recordCounter) feed(b []byte) {
	for len(b) > 0 {
		if r.hdrN < recordHeaderLen {
			k := copy(r.hdr[r.hdrN:], b)
			r.hdrN += k
			b = b[k:]
			if r.hdrN < recordHeaderLen {
				return
			}
			r.left = int(r.hdr[3])<<8 | int(r.hdr[4])
		}
		k := min(len(b), r.left)
		b = b[k:]
		r.left -= k
		if r.left == 0 {
			r.hdrN = 0
			if r.hdr[0] == typeChangeCipherSpec {
				r.sinceCCS = 0
			} else {
				r.sinceCCS++
			}
		}
	}
}

// atBoundary reports that no record is half-read or half-written.
func (f *fdState) atBoundary() bool {
	return f.hdrN == 0 && f.in.hdrN == 0 && f.out.hdrN == 0
}

// serverRandom returns the ServerHello random, or nil if it was not seen.
func (f *fdState) serverRandom() []byte {
	if f.helloN < len(f.hello) || f.hello[0] != hsServerHello {
		return nil
	}
	return f.hello[6:38]
}

// sysRead reads from the socket: during the handshake, an empty socket
// yields to the loop; afterwards it returns sock.ErrWouldBlock.
func (s *Conn) sysRead(b []byte) (int, error) {
	for {
		var n int
		var err error
		if s.via != nil {
			n, err = s.via.Read(b)
		} else {
			n, err = unix.Read(s.fd, b)
		}
		switch {
		case err == unix.EAGAIN:
			if s.yield == nil {
				return 0, sock.ErrWouldBlock
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

func (c fdConn) Read(b []byte) (int, error) {
	s := c.s
	f := &s.fdc
	if s.phase == phaseLib && f.hdrN == 0 {
		return s.sysRead(b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	for f.hdrN < recordHeaderLen {
		n, err := s.sysRead(f.hdr[f.hdrN:])
		if err != nil {
			return 0, err
		}
		f.hdrN += n
		if f.hdrN == recordHeaderLen {
			f.hdrOut = 0
			f.left = int(f.hdr[3])<<8 | int(f.hdr[4])
		}
	}
	if f.hdrOut < recordHeaderLen {
		n := copy(b, f.hdr[f.hdrOut:])
		f.in.feed(f.hdr[f.hdrOut : f.hdrOut+n])
		f.hdrOut += n
		f.endRecord()
		return n, nil
	}
	n, err := s.sysRead(b[:min(len(b), f.left)])
	if err != nil {
		return 0, err
	}
	if f.hdr[0] == typeHandshake && f.helloN < len(f.hello) {
		f.helloN += copy(f.hello[f.helloN:], b[:n])
	}
	f.in.feed(b[:n])
	f.left -= n
	f.endRecord()
	return n, nil
}

// endRecord starts over with the next header once the record is handed over.
func (f *fdState) endRecord() {
	if f.hdrOut == recordHeaderLen && f.left == 0 {
		f.hdrN = 0
	}
}

func (c fdConn) Write(b []byte) (int, error) {
	s := c.s
	if s.phase != phaseLib {
		s.fdc.out.feed(b)
		if s.phase == phaseTickets && s.fdc.libReading {
			// crypto/tls answered something while reading (a KeyUpdate):
			// its write keys are no longer ours to know. Keep it.
			s.phase, s.nextRec = phaseLib, nil
		}
	}
	var err error
	if s.fdc.libReading {
		err = s.sendReply(b) // crypto/tls answers the server while reading
	} else {
		err = s.send(b)
	}
	if err != nil {
		return 0, err
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
