package main

// The HTTP/2 floor (-h2): cleartext HTTP/2 with prior knowledge (h2c, what
// scripts/bench-h2.sh runs by default), over epoll. Per connection: the
// preface, one SETTINGS and one connection WINDOW_UPDATE once, then -m
// streams kept in flight by writing one pre-encoded HEADERS frame (END_STREAM,
// odd increasing stream ids) per finished response. Frames are read by their
// 9-byte headers only; a response counts when a frame with END_STREAM ends.
// SETTINGS is acknowledged, PING answered, RST_STREAM counted as an error,
// and GOAWAY drains the connection and reconnects: the streams above its
// last stream id were never processed and go back to the budget.
//
// Flow control: our SETTINGS opens every stream's window to 2^31-1, so no
// stream of a response below 2 GiB needs a stream WINDOW_UPDATE; the
// connection's window is topped up in batches of 1 GiB of DATA received.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	flagEndStream     = 0x1
	flagAck           = 0x1 // SETTINGS and PING
	flagEndHeaders    = 0x4
	maxWindow         = 1<<31 - 1
	connWindowBatch   = 1 << 30
)

// h2Target is what the HTTP/2 loop needs: the address, the bytes that open a
// connection and one HEADERS frame whose stream id is patched per request.
type h2Target struct {
	addr    unix.SockaddrInet4
	open    []byte // preface, SETTINGS, connection WINDOW_UPDATE
	headers []byte // one HEADERS frame, stream id 0
}

func newH2Target(raw string) (*h2Target, error) {
	u, addr, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	t := &h2Target{addr: addr}

	// Sensitive fields are encoded "never indexed": the block leaves the
	// server's dynamic table alone, so the same bytes are valid every time.
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{
		{Name: ":method", Value: "GET"},
		{Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: u.Host, Sensitive: true},
		{Name: ":path", Value: u.RequestURI(), Sensitive: true},
	} {
		if err := enc.WriteField(f); err != nil {
			return nil, err
		}
	}
	t.headers = appendFrame(nil, frameHeaders, flagEndStream|flagEndHeaders, 0, block.Bytes())

	settings := make([]byte, 0, 12)
	settings = binary.BigEndian.AppendUint16(settings, 0x2) // ENABLE_PUSH
	settings = binary.BigEndian.AppendUint32(settings, 0)
	settings = binary.BigEndian.AppendUint16(settings, 0x4) // INITIAL_WINDOW_SIZE
	settings = binary.BigEndian.AppendUint32(settings, maxWindow)
	t.open = appendFrame([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frameSettings, 0, 0, settings)
	t.open = appendWindowUpdate(t.open, 0, maxWindow-65535)
	return t, nil
}

func appendFrame(b []byte, typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}

func appendWindowUpdate(b []byte, stream, inc uint32) []byte {
	var p [4]byte
	binary.BigEndian.PutUint32(p[:], inc)
	return appendFrame(b, frameWindowUpdate, 0, stream, p[:])
}

// h2Conn is one connection's state: the frame being read and what waits to
// be written.
type h2Conn struct {
	fd       int
	state    int    // h2Connecting, h2Open, h2Draining (GOAWAY seen), h2Closed
	next     uint32 // next stream id
	inflight int
	hdr      [9]byte // the frame header being read
	hn       int     // bytes of hdr read
	left     int     // payload bytes of the current frame still to read
	capt     [8]byte // the first payload bytes of PING and GOAWAY
	captN    int
	connRecv int    // DATA bytes not yet given back to the connection window
	out      []byte // frames to write; what EAGAIN refused waits for EPOLLOUT
}

const (
	h2Connecting = iota
	h2Open
	h2Draining
	h2Closed
)

// h2Loop runs the connections on one epoll instance.
type h2Loop struct {
	t       *h2Target
	epfd    int
	conns   []h2Conn
	streams int
	budget  int64 // requests still to send; <0: no limit (-n 0)
	st      *stats
	buf     []byte
}

func runH2Epoll(t *h2Target, conns, streams int, n int64, end time.Time, st *stats) error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(epfd)
	l := &h2Loop{t: t, epfd: epfd, conns: make([]h2Conn, conns), streams: streams, budget: -1, st: st, buf: make([]byte, 256<<10)}
	if n > 0 {
		l.budget = n
	}
	for i := range l.conns {
		l.conns[i].out = make([]byte, 0, len(t.open)+streams*(len(t.headers)+64)+4096)
		if err := l.dial(i); err != nil {
			return err
		}
	}
	events := make([]unix.EpollEvent, 512)
	for l.active() && time.Now().Before(end) {
		k, err := unix.EpollWait(epfd, events, 100)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return err
		}
		for _, ev := range events[:k] {
			l.event(int(ev.Fd), ev.Events)
		}
	}
	for i := range l.conns {
		if c := &l.conns[i]; c.state != h2Closed {
			unix.Close(c.fd)
		}
	}
	return nil
}

// active reports whether any connection still has work: streams in flight,
// or requests left to send.
func (l *h2Loop) active() bool {
	for i := range l.conns {
		c := &l.conns[i]
		if c.state != h2Closed && (c.inflight > 0 || l.budget != 0 || c.state == h2Connecting) {
			return true
		}
	}
	return false
}

func (l *h2Loop) dial(i int) error {
	fd, err := socket()
	if err != nil {
		return err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(i)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return err
	}
	if err := unix.Connect(fd, &l.t.addr); err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return err
	}
	c := &l.conns[i]
	*c = h2Conn{fd: fd, state: h2Connecting, next: 1, out: c.out[:0]}
	return nil
}

// close ends connection i; its unanswered streams are errors. It reconnects
// while requests are left.
func (l *h2Loop) close(i int) {
	c := &l.conns[i]
	l.st.errors += int64(c.inflight)
	c.inflight = 0
	unix.Close(c.fd)
	c.state = h2Closed
	if l.budget != 0 {
		if err := l.dial(i); err != nil {
			l.st.errors++
		}
	}
}

func (l *h2Loop) event(i int, events uint32) {
	c := &l.conns[i]
	if c.state == h2Closed {
		return
	}
	if c.state == h2Connecting {
		if events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 || events&unix.EPOLLOUT == 0 {
			l.st.errors++
			unix.Close(c.fd)
			c.state = h2Closed
			return
		}
		c.state = h2Open
		c.out = append(c.out, l.t.open...)
		for c.inflight < l.streams && l.request(c) {
		}
	}
	for c.state != h2Closed && events&unix.EPOLLIN != 0 {
		r, e := rawRead(c.fd, l.buf)
		if e == unix.EAGAIN {
			break
		}
		if e != 0 || r == 0 {
			l.flush(c)
			l.close(i)
			return
		}
		l.st.bytes += int64(r)
		if !l.frames(c, l.buf[:r]) {
			l.flush(c)
			l.close(i)
			return
		}
	}
	if !l.flush(c) {
		l.close(i)
		return
	}
	if c.state == h2Draining && c.inflight == 0 {
		l.close(i)
	}
}

// request appends one HEADERS frame on a new stream, if the budget allows.
func (l *h2Loop) request(c *h2Conn) bool {
	if l.budget == 0 || c.state != h2Open {
		return false
	}
	if c.next > maxWindow { // stream ids run out: drain, then a new connection
		c.state = h2Draining
		return false
	}
	if l.budget > 0 {
		l.budget--
	}
	at := len(c.out)
	c.out = append(c.out, l.t.headers...)
	binary.BigEndian.PutUint32(c.out[at+5:], c.next)
	c.next += 2
	c.inflight++
	return true
}

// frames walks the frame headers in b; false: the connection must close.
func (l *h2Loop) frames(c *h2Conn, b []byte) bool {
	for len(b) > 0 {
		if c.hn < 9 {
			k := copy(c.hdr[c.hn:], b)
			c.hn += k
			b = b[k:]
			if c.hn < 9 {
				return true
			}
			c.left = int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
			c.captN = 0
		}
		k := min(c.left, len(b))
		if typ := c.hdr[3]; (typ == framePing || typ == frameGoAway) && c.captN < len(c.capt) {
			c.captN += copy(c.capt[c.captN:], b[:k])
		}
		c.left -= k
		b = b[k:]
		if c.left > 0 {
			return true
		}
		c.hn = 0
		if !l.frame(c) {
			return false
		}
	}
	return true
}

// frame acts on the frame whose header is c.hdr, now read whole.
func (l *h2Loop) frame(c *h2Conn) bool {
	length := int(c.hdr[0])<<16 | int(c.hdr[1])<<8 | int(c.hdr[2])
	typ, flags := c.hdr[3], c.hdr[4]
	stream := binary.BigEndian.Uint32(c.hdr[5:]) & maxWindow
	switch typ {
	case frameData:
		c.connRecv += length
		if c.connRecv >= connWindowBatch {
			c.out = appendWindowUpdate(c.out, 0, uint32(c.connRecv))
			c.connRecv = 0
		}
		if flags&flagEndStream != 0 {
			l.done(c, true)
		}
	case frameHeaders:
		if flags&flagEndStream != 0 {
			l.done(c, true)
		}
	case frameRSTStream:
		if stream != 0 {
			l.done(c, false)
		}
	case frameSettings:
		if flags&flagAck == 0 {
			c.out = appendFrame(c.out, frameSettings, flagAck, 0, nil)
		}
	case framePing:
		if flags&flagAck == 0 && c.captN == 8 {
			c.out = appendFrame(c.out, framePing, flagAck, 0, c.capt[:])
		}
	case frameGoAway:
		if c.captN < 4 {
			return false
		}
		last := binary.BigEndian.Uint32(c.capt[:4]) & maxWindow
		if c.state == h2Open && c.next > 1 {
			// The streams above last were never processed: give them back.
			if lastSent := c.next - 2; last < lastSent {
				above := int((lastSent - last + 1) / 2) // odd ids in (last, lastSent]
				if last == 0 {
					above = int((lastSent + 1) / 2)
				}
				above = min(above, c.inflight)
				c.inflight -= above
				if l.budget >= 0 {
					l.budget += int64(above)
				}
			}
		}
		c.state = h2Draining
	}
	return true
}

// done ends one stream and opens the next.
func (l *h2Loop) done(c *h2Conn, ok bool) {
	if c.inflight == 0 {
		return // a stream the GOAWAY accounting already gave back
	}
	c.inflight--
	if ok {
		l.st.ok++
	} else {
		l.st.errors++
	}
	l.request(c)
}

// flush writes what c.out holds; false: the socket failed.
func (l *h2Loop) flush(c *h2Conn) bool {
	for len(c.out) > 0 {
		w, e := rawWrite(c.fd, c.out)
		if e == unix.EAGAIN {
			return true // the edge-triggered EPOLLOUT calls event again
		}
		if e != 0 {
			return false
		}
		c.out = c.out[:copy(c.out, c.out[w:])]
	}
	return true
}

var errH2Uring = errors.New("-h2 runs over epoll only (-io epoll)")
