package rawio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is the kernel's struct mmsghdr: one message of sendmmsg or
// recvmmsg and the byte count the call reports for it.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

// Sender queues datagrams for one connected UDP socket and sends them with
// one sendmmsg per batch: a loop that answers many connections in one
// pass makes one system call, not one per datagram.
//
// The datagrams are written into the Sender's own buffer: Buf gives the
// room for the next one, Add takes it once written. Nothing allocates
// after NewSender. Not safe for concurrent use.
type Sender struct {
	fd    int
	buf   []byte // datagrams queued since the last Flush, back to back
	start []int  // start of each queued datagram in buf
	msgs  []mmsghdr
	iovs  []unix.Iovec

	// Dropped counts datagrams the kernel refused (a full send buffer,
	// EAGAIN, or an ICMP error reported on the connected socket): UDP
	// may drop, and QUIC's loss recovery resends what mattered.
	Dropped int64
}

// NewSender returns a Sender for fd with room for batch datagrams of up
// to size bytes each.
func NewSender(fd, batch, size int) *Sender {
	return &Sender{fd: fd, buf: make([]byte, 0, batch*size), start: make([]int, 0, batch),
		msgs: make([]mmsghdr, batch), iovs: make([]unix.Iovec, batch)}
}

// Buf returns an empty slice whose capacity holds at least need bytes,
// for the next datagram to be appended to: pass the grown slice to Add.
// It flushes first when the batch is full.
func (s *Sender) Buf(need int) []byte {
	if len(s.start) == cap(s.start) || cap(s.buf)-len(s.buf) < need {
		s.Flush()
	}
	return s.buf[len(s.buf):len(s.buf)]
}

// Add queues b, which Buf returned and the caller appended one datagram
// to (an empty b queues nothing). b must not have outgrown Buf's
// capacity.
func (s *Sender) Add(b []byte) {
	if len(b) == 0 {
		return
	}
	room := s.buf[len(s.buf):cap(s.buf)]
	if len(b) > len(room) || unsafe.SliceData(b) != unsafe.SliceData(room) {
		// Appended beyond Buf's room: it lives elsewhere now. Send what
		// is queued, then this one on its own.
		s.Flush()
		s.send1(b)
		return
	}
	s.start = append(s.start, len(s.buf))
	s.buf = s.buf[:len(s.buf)+len(b)]
}

// Queued reports how many datagrams wait for Flush.
func (s *Sender) Queued() int { return len(s.start) }

// Flush sends every queued datagram, in as few sendmmsg calls as the
// kernel allows; datagrams it refuses are counted in Dropped.
func (s *Sender) Flush() {
	n := len(s.start)
	if n == 0 {
		return
	}
	for i := 0; i < n; i++ {
		end := len(s.buf)
		if i+1 < n {
			end = s.start[i+1]
		}
		s.iovs[i].Base = &s.buf[s.start[i]]
		s.iovs[i].SetLen(end - s.start[i])
		m := &s.msgs[i].hdr
		m.Iov = &s.iovs[i]
		m.Iovlen = 1
	}
	for done := 0; done < n; {
		r, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&s.msgs[done])), uintptr(n-done), 0, 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e != 0:
			// The first datagram is refused: drop it, go on with the
			// rest (an ICMP error is reported once).
			s.Dropped++
			done++
		default:
			done += int(r)
		}
	}
	s.buf, s.start = s.buf[:0], s.start[:0]
}

// send1 sends one datagram at once.
func (s *Sender) send1(b []byte) {
	_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
	if e != 0 {
		s.Dropped++
	}
}

// Receiver reads datagrams from one UDP socket, a batch per recvmmsg,
// into buffers of its own. Nothing allocates after NewReceiver. Not safe
// for concurrent use.
type Receiver struct {
	fd   int
	bufs []byte
	size int
	msgs []mmsghdr
	iovs []unix.Iovec
	n    int
}

// NewReceiver returns a Receiver for fd that reads up to batch datagrams
// of up to size bytes per call (a longer datagram is dropped).
func NewReceiver(fd, batch, size int) *Receiver {
	r := &Receiver{fd: fd, bufs: make([]byte, batch*size), size: size,
		msgs: make([]mmsghdr, batch), iovs: make([]unix.Iovec, batch)}
	for i := range r.msgs {
		r.iovs[i].Base = &r.bufs[i*size]
		r.iovs[i].SetLen(size)
		r.msgs[i].hdr.Iov = &r.iovs[i]
		r.msgs[i].hdr.Iovlen = 1
	}
	return r
}

// Read takes what the socket holds, up to a batch, without waiting: the
// number of datagrams (0 when there are none, or on an error such as an
// ICMP port unreachable reported on a connected socket, which err
// returns). Datagram(i) returns them until the next Read.
func (r *Receiver) Read() (int, error) {
	for {
		for i := range r.msgs {
			r.msgs[i].hdr.Flags = 0
		}
		n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(r.fd), uintptr(unsafe.Pointer(&r.msgs[0])), uintptr(len(r.msgs)), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			r.n = int(n)
			return r.n, nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			r.n = 0
			return 0, nil
		}
		r.n = 0
		return 0, e
	}
}

// Datagram returns the i-th datagram of the last Read (nil if the kernel
// cut it to the buffer's size: it was longer than allowed).
func (r *Receiver) Datagram(i int) []byte {
	m := &r.msgs[i]
	if m.hdr.Flags&unix.MSG_TRUNC != 0 {
		return nil
	}
	return r.bufs[i*r.size : i*r.size+int(m.n)]
}
