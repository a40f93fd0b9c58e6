package h2

import (
	"errors"
	"fmt"

	"golang.org/x/net/http2"
)

// Defaults for Config fields left zero.
const (
	// DefaultStreamWindow is the receive window of each stream
	// (SETTINGS_INITIAL_WINDOW_SIZE): 16 times the lab's largest body, so a
	// 1 MiB download never waits for a stream WINDOW_UPDATE.
	DefaultStreamWindow = 16 << 20
	// DefaultConnWindow is the connection's receive window, as h2load's
	// default (-W 30): one WINDOW_UPDATE per 512 MiB received.
	DefaultConnWindow = 1<<30 - 1
	// DefaultMaxHeaderBytes bounds one response header block (HEADERS plus
	// CONTINUATION fragments), as h1.MaxHeaderBytes bounds HTTP/1.1 heads.
	DefaultMaxHeaderBytes = 64 << 10
	// MaxStreamsLimit bounds Config.MaxStreams.
	MaxStreamsLimit = 1 << 16
	// MaxQueuedControlFrames bounds the control frames (SETTINGS and PING
	// acknowledgements, WINDOW_UPDATE, RST_STREAM) the connection holds
	// unwritten, as x/net/http2 does: a server that keeps asking for them
	// and does not read the answers makes Feed end the connection with
	// ENHANCE_YOUR_CALM instead of growing the output without bound.
	MaxQueuedControlFrames = 10000
	// MaxPendingBytes is how many unwritten bytes the connection holds
	// before it opens no more streams (Free is 0 until the socket takes
	// them): a server that answers streams without reading the requests
	// cannot grow the output either.
	MaxPendingBytes = 1 << 20
)

// Config sets up a Conn.
type Config struct {
	// MaxStreams is how many streams the connection runs at once (the
	// stream table's size); the server's SETTINGS_MAX_CONCURRENT_STREAMS
	// lowers it. Required, 1..MaxStreamsLimit.
	MaxStreams int
	// StreamWindow is each stream's receive window (DefaultStreamWindow
	// when zero), at most 2^31-1.
	StreamWindow uint32
	// ConnWindow is the connection's receive window (DefaultConnWindow
	// when zero), 65535..2^31-1.
	ConnWindow uint32
	// MaxFrameSize is the largest frame the server may send
	// (SETTINGS_MAX_FRAME_SIZE); DefaultMaxFrameSize when zero.
	MaxFrameSize uint32
	// MaxHeaderBytes bounds one response header block;
	// DefaultMaxHeaderBytes when zero.
	MaxHeaderBytes int
}

// withDefaults returns cfg with zero fields set, or an error naming the
// field that is out of range.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.StreamWindow == 0 {
		cfg.StreamWindow = DefaultStreamWindow
	}
	if cfg.ConnWindow == 0 {
		cfg.ConnWindow = DefaultConnWindow
	}
	if cfg.MaxFrameSize == 0 {
		cfg.MaxFrameSize = DefaultMaxFrameSize
	}
	if cfg.MaxHeaderBytes == 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	switch {
	case cfg.MaxStreams < 1 || cfg.MaxStreams > MaxStreamsLimit:
		return cfg, fmt.Errorf("max streams %d: want 1..%d", cfg.MaxStreams, MaxStreamsLimit)
	case cfg.StreamWindow > maxWindow:
		return cfg, fmt.Errorf("stream window %d: want at most %d", cfg.StreamWindow, maxWindow)
	case cfg.ConnWindow < initialWindow || cfg.ConnWindow > maxWindow:
		return cfg, fmt.Errorf("connection window %d: want %d..%d", cfg.ConnWindow, initialWindow, maxWindow)
	case cfg.MaxFrameSize < DefaultMaxFrameSize || cfg.MaxFrameSize > MaxFrameSizeLimit:
		return cfg, fmt.Errorf("max frame size %d: want %d..%d", cfg.MaxFrameSize, DefaultMaxFrameSize, MaxFrameSizeLimit)
	case cfg.MaxHeaderBytes < 0:
		return cfg, errors.New("max header bytes must not be negative")
	}
	return cfg, nil
}

// Handler receives the events of a Conn. Feed calls its methods
// synchronously, in the order the frames arrived. They must not call Feed,
// Start, Cancel, Shutdown or Reset on the Conn (the engine starts the next
// requests after Feed returns); read-only methods (Free, Busy, StreamID,
// Closing) are fine. Every started stream ends in exactly one of Done,
// Reset or Refused, or stays Busy until the engine gives up on the
// connection (Feed's error, the socket's end) or cancels it.
type Handler interface {
	// Response reports the final response headers of slot's request (1xx
	// informational responses are skipped).
	Response(slot, status int)
	// Body reports response body bytes (padding removed). b aliases the
	// buffer given to Feed: it is valid only during the call.
	Body(slot int, b []byte)
	// Done reports a complete response; slot is free again.
	Done(slot int)
	// Reset reports that the server reset the stream (RST_STREAM) with
	// code, other than REFUSED_STREAM; slot is free again.
	Reset(slot int, code http2.ErrCode)
	// Refused reports a request the server did not process: a
	// RST_STREAM(REFUSED_STREAM) or a stream above a GOAWAY's last stream
	// id (code is then the GOAWAY's). Retrying it is safe. slot is free.
	Refused(slot int, code http2.ErrCode)
	// GoAway reports a GOAWAY: no new streams on this connection; streams
	// up to last still complete. It comes before the Refused calls it
	// causes, and again if the server sends another GOAWAY.
	GoAway(last uint32, code http2.ErrCode)
}

// ConnError is a connection error (RFC 9113 section 5.4.1): the server broke
// the protocol. Feed returns it and has queued a GOAWAY with Code; the
// connection is dead and its busy streams will never complete.
type ConnError struct {
	Code   http2.ErrCode
	Reason string
}

func (e *ConnError) Error() string {
	return "http2: connection error " + e.Code.String() + ": " + e.Reason
}

func connErr(code http2.ErrCode, reason string) error { return &ConnError{Code: code, Reason: reason} }

// stream is one slot of the stream table.
type stream struct {
	final   bool   // final (non-1xx) response headers received
	blocked bool   // request body bytes wait for send window
	unacked uint32 // bytes received since the stream's last WINDOW_UPDATE
	recvWin int64  // bytes the server may still send on the stream
	sendWin int64  // request body bytes we may still send
	bodyOff int    // request body bytes sent
	tmpl    *Template
}

// Conn is the client side of one HTTP/2 connection, without I/O: Feed takes
// the bytes read from the socket, Pending holds the bytes to write, Start
// opens a stream with the Template's request, and a Handler hears about
// responses. One Conn serves socket after socket (Reset), reusing its
// buffers and stream table: steady-state use allocates nothing.
//
// A Conn is not safe for concurrent use: one event loop owns it.
type Conn struct {
	cfg  Config
	tmpl *Template
	h    Handler

	out    []byte // bytes to write: out[outOff:]
	outOff int
	walk   int // start of the first frame in out not wholly written
	ctlN   int // control frames in out not wholly written

	// Frame reader.
	hdr       [frameHeaderLen]byte
	hdrN      int
	fh        frameHeader
	rem       int // payload bytes of the current frame still to come
	fix       [8]byte
	fixN      int
	prefix    int // HEADERS: pad length and priority bytes
	dataLeft  int // DATA: data bytes still to come; HEADERS: fragment bytes
	cur       int // slot of the current DATA frame's stream, or -1
	block     []byte
	blockID   uint32 // stream whose header block is being read (CONTINUATION expected), or 0
	blockEnd  bool   // the HEADERS frame that began the block had END_STREAM
	dec       statusDecoder
	preface   bool // the server's SETTINGS has arrived
	settingsN int  // SETTINGS frames received

	// Server settings and windows.
	peerStreams uint32
	peerWindow  int64 // SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame   int   // SETTINGS_MAX_FRAME_SIZE
	sendConn    int64 // connection send window
	recvConn    int64 // bytes the server may still send on the connection
	connUnacked uint32

	// Streams.
	ids     []uint32 // stream id per slot, 0 when free (scanned by lookup)
	streams []stream
	free    []int32
	blocked int // busy streams with request body bytes waiting for window
	nextID  uint32
	last    int // lookup's cache
	goAway  bool
	closing bool // Shutdown was called
	err     error
}

// NewConn returns a Conn for cfg that sends tmpl's request and reports to
// h, ready for its first socket (its preface is Pending).
func NewConn(cfg Config, tmpl *Template, h Handler) (*Conn, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if tmpl == nil || h == nil {
		return nil, errors.New("h2: NewConn needs a template and a handler")
	}
	c := &Conn{
		cfg: cfg, tmpl: tmpl, h: h,
		ids:     make([]uint32, cfg.MaxStreams),
		streams: make([]stream, cfg.MaxStreams),
		free:    make([]int32, 0, cfg.MaxStreams),
		out:     make([]byte, 0, 4096),
		block:   make([]byte, 0, 1024),
	}
	c.Reset()
	return c, nil
}

// Reset forgets the previous socket (its busy streams are dropped without
// events: the engine has accounted for them) and queues the client
// preface, SETTINGS and connection WINDOW_UPDATE for a new one.
func (c *Conn) Reset() {
	c.out, c.outOff, c.ctlN = c.out[:0], 0, 0
	c.hdrN, c.rem, c.fixN, c.prefix, c.dataLeft, c.cur = 0, 0, 0, 0, 0, -1
	c.block, c.blockID, c.blockEnd = c.block[:0], 0, false
	c.dec.init(DefaultHeaderTableSize)
	c.preface, c.settingsN = false, 0
	c.peerStreams = 1<<32 - 1
	c.peerWindow, c.peerFrame, c.sendConn = initialWindow, DefaultMaxFrameSize, initialWindow
	c.recvConn, c.connUnacked = int64(c.cfg.ConnWindow), 0
	clear(c.ids)
	clear(c.streams)
	c.free = c.free[:0]
	for i := len(c.ids) - 1; i >= 0; i-- {
		c.free = append(c.free, int32(i))
	}
	c.blocked, c.nextID, c.last = 0, 1, 0
	c.goAway, c.closing, c.err = false, false, nil

	c.out = append(c.out, http2.ClientPreface...)
	c.walk = len(c.out)
	n := 1
	if c.cfg.StreamWindow != initialWindow {
		n++
	}
	if c.cfg.MaxFrameSize != DefaultMaxFrameSize {
		n++
	}
	c.out = appendFrameHeader(c.out, 6*n, http2.FrameSettings, 0, 0)
	c.out = appendSetting(c.out, http2.SettingEnablePush, 0)
	if c.cfg.StreamWindow != initialWindow {
		c.out = appendSetting(c.out, http2.SettingInitialWindowSize, c.cfg.StreamWindow)
	}
	if c.cfg.MaxFrameSize != DefaultMaxFrameSize {
		c.out = appendSetting(c.out, http2.SettingMaxFrameSize, c.cfg.MaxFrameSize)
	}
	c.ctlN++
	if c.cfg.ConnWindow > initialWindow {
		c.out = appendWindowUpdate(c.out, 0, c.cfg.ConnWindow-initialWindow)
		c.ctlN++
	}
}

// Pending returns the bytes waiting to be written to the socket. The slice
// is valid until the next call of any other method.
func (c *Conn) Pending() []byte { return c.out[c.outOff:] }

// Wrote records that the first n bytes of Pending were written.
func (c *Conn) Wrote(n int) {
	c.outOff += n
	// Count the control frames that have wholly left.
	for c.walk+frameHeaderLen <= c.outOff {
		h := c.out[c.walk:]
		end := c.walk + frameHeaderLen + (int(h[0])<<16 | int(h[1])<<8 | int(h[2]))
		if end > c.outOff {
			break
		}
		if isControl(http2.FrameType(h[3])) {
			c.ctlN--
		}
		c.walk = end
	}
	switch {
	case c.outOff >= len(c.out):
		c.out, c.outOff, c.walk = c.out[:0], 0, 0
	case c.outOff >= 4096 && c.outOff >= len(c.out)/2:
		// Keep the frame being written whole, for the count above.
		k := copy(c.out, c.out[c.walk:])
		c.out, c.outOff, c.walk = c.out[:k], c.outOff-c.walk, 0
	}
}

// Full reports that MaxPendingBytes or more wait to be written: Free is 0
// until Wrote takes the output below it.
func (c *Conn) Full() bool { return len(c.out)-c.outOff >= MaxPendingBytes }

// control notes a control frame just queued.
func (c *Conn) control() { c.ctlN++ }

// isControl reports the frame types MaxQueuedControlFrames counts: all but
// the requests' HEADERS, CONTINUATION and DATA.
func isControl(t http2.FrameType) bool {
	return t != http2.FrameHeaders && t != http2.FrameContinuation && t != http2.FrameData
}

// Slots returns the size of the stream table (Config.MaxStreams).
func (c *Conn) Slots() int { return len(c.ids) }

// Busy reports whether slot carries a request in progress.
func (c *Conn) Busy(slot int) bool { return c.ids[slot] != 0 }

// StreamID returns the stream id of slot's request, or 0 when it is free.
func (c *Conn) StreamID(slot int) uint32 { return c.ids[slot] }

// Active returns the number of busy slots.
func (c *Conn) Active() int { return len(c.ids) - len(c.free) }

// Closing reports that the connection will start no more streams: the
// server sent GOAWAY, the stream ids are used up, Shutdown was called, or a
// connection error happened. Once no slot is busy the engine should close
// the socket and Reset for a new connection.
func (c *Conn) Closing() bool {
	return c.goAway || c.closing || c.err != nil || c.nextID > maxStreamID
}

// Limit returns how many streams may be open at once now: MaxStreams,
// lowered by the server's SETTINGS_MAX_CONCURRENT_STREAMS; 1 until the
// server's first SETTINGS has arrived.
func (c *Conn) Limit() int {
	n := len(c.ids)
	if !c.preface {
		return 1
	}
	if uint64(c.peerStreams) < uint64(n) {
		n = int(c.peerStreams)
	}
	return n
}

// ServerLimit returns the server's SETTINGS_MAX_CONCURRENT_STREAMS (2^32-1
// when it set none) and whether its first SETTINGS has arrived.
func (c *Conn) ServerLimit() (uint32, bool) { return c.peerStreams, c.preface }

// Free returns how many streams Start can open now: none while the
// connection is Closing or Full.
func (c *Conn) Free() int {
	if c.Closing() || c.Full() {
		return 0
	}
	n := c.Limit() - c.Active()
	if left := int((maxStreamID-c.nextID)/2) + 1; left < n {
		n = left
	}
	return max(n, 0)
}

// Start opens a stream for the template's request, queues its HEADERS (and
// as much of the body as the windows allow) and returns its slot, or -1
// when Free is 0.
func (c *Conn) Start() int { return c.StartWith(c.tmpl) }

// StartWith is Start with another request than NewConn's template (a
// run's targets share one connection).
func (c *Conn) StartWith(tmpl *Template) int {
	if c.Free() == 0 {
		return -1
	}
	slot := int(c.free[len(c.free)-1])
	c.free = c.free[:len(c.free)-1]
	id := c.nextID
	c.nextID += 2
	c.ids[slot] = id
	s := &c.streams[slot]
	*s = stream{recvWin: int64(c.cfg.StreamWindow), sendWin: c.peerWindow, tmpl: tmpl}

	block, body := tmpl.block, tmpl.body
	flags := http2.Flags(0)
	if len(body) == 0 {
		flags = http2.FlagHeadersEndStream
	}
	n := min(len(block), c.peerFrame)
	if n == len(block) {
		flags |= http2.FlagHeadersEndHeaders
	}
	c.out = appendFrameHeader(c.out, n, http2.FrameHeaders, flags, id)
	c.out = append(c.out, block[:n]...)
	for off := n; off < len(block); off += n {
		n = min(len(block)-off, c.peerFrame)
		f := http2.Flags(0)
		if off+n == len(block) {
			f = http2.FlagContinuationEndHeaders
		}
		c.out = appendFrameHeader(c.out, n, http2.FrameContinuation, f, id)
		c.out = append(c.out, block[off:off+n]...)
	}
	if len(body) > 0 {
		c.sendBody(slot)
	}
	return slot
}

// sendBody queues as much of slot's request body as the windows allow.
func (c *Conn) sendBody(slot int) {
	s := &c.streams[slot]
	body := s.tmpl.body
	for s.bodyOff < len(body) {
		n := int(min(int64(len(body)-s.bodyOff), int64(c.peerFrame), c.sendConn, s.sendWin))
		if n <= 0 {
			if !s.blocked {
				s.blocked = true
				c.blocked++
			}
			return
		}
		f := http2.Flags(0)
		if s.bodyOff+n == len(body) {
			f = http2.FlagDataEndStream
		}
		c.out = appendFrameHeader(c.out, n, http2.FrameData, f, c.ids[slot])
		c.out = append(c.out, body[s.bodyOff:s.bodyOff+n]...)
		s.bodyOff += n
		c.sendConn -= int64(n)
		s.sendWin -= int64(n)
	}
	if s.blocked {
		s.blocked = false
		c.blocked--
	}
}

// sendBlocked resumes the request bodies that wait for window.
func (c *Conn) sendBlocked() {
	for slot := 0; slot < len(c.ids) && c.blocked > 0 && c.sendConn > 0; slot++ {
		if c.ids[slot] != 0 && c.streams[slot].blocked {
			c.sendBody(slot)
		}
	}
}

// Cancel abandons slot's request (a timeout): it queues RST_STREAM(CANCEL)
// and frees the slot without an event. Frames the server still sends for
// the stream are read and dropped.
func (c *Conn) Cancel(slot int) {
	if c.ids[slot] == 0 {
		return
	}
	if c.err == nil {
		c.out = appendRSTStream(c.out, c.ids[slot], http2.ErrCodeCancel)
		c.control()
	}
	c.release(slot)
}

// Shutdown queues a GOAWAY(NO_ERROR) and starts no more streams; busy
// streams still complete.
func (c *Conn) Shutdown() {
	if !c.closing && c.err == nil {
		c.out = appendGoAway(c.out, 0, http2.ErrCodeNo)
		c.control()
	}
	c.closing = true
}

// release frees slot.
func (c *Conn) release(slot int) {
	if c.streams[slot].blocked {
		c.blocked--
	}
	c.ids[slot] = 0
	c.streams[slot] = stream{}
	c.free = append(c.free, int32(slot))
}

// lookup returns the slot of stream id, or -1.
func (c *Conn) lookup(id uint32) int {
	if c.ids[c.last] == id {
		return c.last
	}
	for i, v := range c.ids {
		if v == id {
			c.last = i
			return i
		}
	}
	return -1
}
