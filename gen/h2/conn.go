package h2

import (
	"encoding/binary"
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
	c.out, c.outOff = c.out[:0], 0
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
	if c.cfg.ConnWindow > initialWindow {
		c.out = appendWindowUpdate(c.out, 0, c.cfg.ConnWindow-initialWindow)
	}
}

// Pending returns the bytes waiting to be written to the socket. The slice
// is valid until the next call of any other method.
func (c *Conn) Pending() []byte { return c.out[c.outOff:] }

// Wrote records that the first n bytes of Pending were written.
func (c *Conn) Wrote(n int) {
	c.outOff += n
	switch {
	case c.outOff >= len(c.out):
		c.out, c.outOff = c.out[:0], 0
	case c.outOff >= 4096 && c.outOff >= len(c.out)/2:
		k := copy(c.out, c.out[c.outOff:])
		c.out, c.outOff = c.out[:k], 0
	}
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

// Free returns how many streams Start can open now.
func (c *Conn) Free() int {
	if c.Closing() {
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
	}
	c.release(slot)
}

// Shutdown queues a GOAWAY(NO_ERROR) and starts no more streams; busy
// streams still complete.
func (c *Conn) Shutdown() {
	if !c.closing && c.err == nil {
		c.out = appendGoAway(c.out, 0, http2.ErrCodeNo)
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

// Feed reads the bytes b received from the socket, reporting events to the
// Handler and queueing what the protocol answers (SETTINGS and PING
// acknowledgements, WINDOW_UPDATEs). Frames may be split anywhere across
// calls. After a *ConnError every call returns it again. Feed does not
// retain b.
func (c *Conn) Feed(b []byte) error {
	if c.err != nil {
		return c.err
	}
	for len(b) > 0 {
		if c.hdrN < frameHeaderLen {
			n := copy(c.hdr[c.hdrN:], b)
			c.hdrN += n
			b = b[n:]
			if c.hdrN < frameHeaderLen {
				return nil
			}
			if err := c.beginFrame(); err != nil {
				return c.fail(err)
			}
		} else {
			n := min(len(b), c.rem)
			err := c.payload(b[:n])
			b = b[n:]
			c.rem -= n
			if err != nil {
				return c.fail(err)
			}
		}
		if c.rem == 0 {
			c.hdrN = 0
			if err := c.endFrame(); err != nil {
				return c.fail(err)
			}
		}
	}
	return nil
}

// fail records a connection error and queues the GOAWAY that reports it.
func (c *Conn) fail(err error) error {
	code := http2.ErrCodeInternal
	var ce *ConnError
	if errors.As(err, &ce) {
		code = ce.Code
	}
	c.out = appendGoAway(c.out, 0, code)
	c.err = err
	return err
}

// checkStream rejects frames for streams this connection never opened.
func (c *Conn) checkStream(id uint32) error {
	if id == 0 || id&1 == 0 || id >= c.nextID {
		return connErr(http2.ErrCodeProtocol, "frame for a stream the client did not open")
	}
	return nil
}

// beginFrame validates the frame header in c.hdr and prepares its payload.
func (c *Conn) beginFrame() error {
	fh := parseFrameHeader(&c.hdr)
	c.fh, c.rem, c.fixN, c.prefix, c.dataLeft, c.cur = fh, fh.length, 0, 0, 0, -1
	if !c.preface && string(c.hdr[:5]) == "HTTP/" {
		return connErr(http2.ErrCodeProtocol, "the server answered in HTTP/1.x: it does not speak HTTP/2 on this port (h2c needs prior-knowledge support; over TLS, ALPN h2)")
	}
	if fh.length > int(c.cfg.MaxFrameSize) {
		return connErr(http2.ErrCodeFrameSize, "frame larger than the advertised SETTINGS_MAX_FRAME_SIZE")
	}
	if !c.preface && (fh.typ != http2.FrameSettings || fh.flags.Has(http2.FlagSettingsAck)) {
		return connErr(http2.ErrCodeProtocol, "server preface is not a SETTINGS frame (not an HTTP/2 server?)")
	}
	if c.blockID != 0 && (fh.typ != http2.FrameContinuation || fh.stream != c.blockID) {
		return connErr(http2.ErrCodeProtocol, "header block interrupted before END_HEADERS")
	}
	switch fh.typ {
	case http2.FrameData:
		if err := c.checkStream(fh.stream); err != nil {
			return err
		}
		if int64(fh.length) > c.recvConn {
			return connErr(http2.ErrCodeFlowControl, "DATA beyond the connection window")
		}
		c.recvConn -= int64(fh.length)
		c.connUnacked += uint32(fh.length)
		c.dataLeft = fh.length
		if fh.flags.Has(http2.FlagDataPadded) {
			c.prefix = 1
			if fh.length == 0 {
				return connErr(http2.ErrCodeProtocol, "padded DATA without a pad length")
			}
		}
		if slot := c.lookup(fh.stream); slot >= 0 {
			s := &c.streams[slot]
			if !s.final {
				return connErr(http2.ErrCodeProtocol, "DATA before the response headers")
			}
			if int64(fh.length) > s.recvWin {
				return connErr(http2.ErrCodeFlowControl, "DATA beyond the stream window")
			}
			s.recvWin -= int64(fh.length)
			s.unacked += uint32(fh.length)
			c.cur = slot
		}
	case http2.FrameHeaders:
		if err := c.checkStream(fh.stream); err != nil {
			return err
		}
		if fh.flags.Has(http2.FlagHeadersPadded) {
			c.prefix++
		}
		if fh.flags.Has(http2.FlagHeadersPriority) {
			c.prefix += 5
		}
		if fh.length < c.prefix {
			return connErr(http2.ErrCodeFrameSize, "HEADERS shorter than its padding and priority fields")
		}
		c.dataLeft = fh.length - c.prefix
		c.block, c.blockID, c.blockEnd = c.block[:0], fh.stream, fh.flags.Has(http2.FlagHeadersEndStream)
	case http2.FrameContinuation:
		if c.blockID == 0 {
			return connErr(http2.ErrCodeProtocol, "CONTINUATION without a header block in progress")
		}
		c.dataLeft = fh.length
	case http2.FrameSettings:
		switch {
		case fh.stream != 0:
			return connErr(http2.ErrCodeProtocol, "SETTINGS on a stream")
		case fh.flags.Has(http2.FlagSettingsAck) && fh.length != 0:
			return connErr(http2.ErrCodeFrameSize, "SETTINGS ACK with a payload")
		case fh.length%6 != 0:
			return connErr(http2.ErrCodeFrameSize, "SETTINGS length not a multiple of 6")
		}
	case http2.FramePing:
		if fh.stream != 0 {
			return connErr(http2.ErrCodeProtocol, "PING on a stream")
		}
		if fh.length != 8 {
			return connErr(http2.ErrCodeFrameSize, "PING payload not 8 bytes")
		}
	case http2.FrameGoAway:
		if fh.stream != 0 {
			return connErr(http2.ErrCodeProtocol, "GOAWAY on a stream")
		}
		if fh.length < 8 {
			return connErr(http2.ErrCodeFrameSize, "GOAWAY shorter than 8 bytes")
		}
	case http2.FrameRSTStream:
		if fh.length != 4 {
			return connErr(http2.ErrCodeFrameSize, "RST_STREAM payload not 4 bytes")
		}
		return c.checkStream(fh.stream)
	case http2.FrameWindowUpdate:
		if fh.length != 4 {
			return connErr(http2.ErrCodeFrameSize, "WINDOW_UPDATE payload not 4 bytes")
		}
		if fh.stream != 0 {
			return c.checkStream(fh.stream)
		}
	case http2.FramePriority:
		if fh.stream == 0 {
			return connErr(http2.ErrCodeProtocol, "PRIORITY on stream 0")
		}
		if fh.length != 5 {
			return connErr(http2.ErrCodeFrameSize, "PRIORITY payload not 5 bytes")
		}
	case http2.FramePushPromise:
		return connErr(http2.ErrCodeProtocol, "PUSH_PROMISE although the client disabled push")
	}
	return nil // unknown frame types are ignored
}

// payload consumes part of the current frame's payload.
func (c *Conn) payload(b []byte) error {
	switch c.fh.typ {
	case http2.FrameData:
		if c.prefix > 0 {
			c.prefix = 0
			pad := int(b[0])
			b = b[1:]
			if pad >= c.fh.length {
				return connErr(http2.ErrCodeProtocol, "DATA padding longer than the frame")
			}
			c.dataLeft = c.fh.length - 1 - pad
		}
		n := min(len(b), c.dataLeft)
		c.dataLeft -= n
		if c.cur >= 0 && n > 0 {
			c.h.Body(c.cur, b[:n])
		}
	case http2.FrameHeaders:
		for c.prefix > 0 && len(b) > 0 { // pad length, then priority (ignored)
			if c.fixN == 0 && c.fh.flags.Has(http2.FlagHeadersPadded) {
				pad := int(b[0])
				if pad > c.dataLeft {
					return connErr(http2.ErrCodeProtocol, "HEADERS padding longer than the frame")
				}
				c.dataLeft -= pad
			}
			c.fixN++
			c.prefix--
			b = b[1:]
		}
		n := min(len(b), c.dataLeft)
		c.dataLeft -= n
		return c.appendBlock(b[:n])
	case http2.FrameContinuation:
		return c.appendBlock(b)
	case http2.FrameSettings:
		for len(b) > 0 {
			n := copy(c.fix[c.fixN:6], b)
			c.fixN += n
			b = b[n:]
			if c.fixN == 6 {
				c.fixN = 0
				if err := c.setting(http2.SettingID(binary.BigEndian.Uint16(c.fix[:2])), binary.BigEndian.Uint32(c.fix[2:6])); err != nil {
					return err
				}
			}
		}
	case http2.FramePing, http2.FrameGoAway, http2.FrameRSTStream, http2.FrameWindowUpdate:
		c.fixN += copy(c.fix[c.fixN:], b) // GOAWAY debug data beyond 8 bytes is dropped
	}
	return nil
}

// appendBlock collects a header block fragment.
func (c *Conn) appendBlock(b []byte) error {
	if len(c.block)+len(b) > c.cfg.MaxHeaderBytes {
		return connErr(http2.ErrCodeEnhanceYourCalm, "response header block larger than the generator's limit")
	}
	c.block = append(c.block, b...)
	return nil
}

// setting applies one SETTINGS parameter from the server.
func (c *Conn) setting(id http2.SettingID, v uint32) error {
	switch id {
	case http2.SettingEnablePush:
		if v != 0 {
			return connErr(http2.ErrCodeProtocol, "server sent SETTINGS_ENABLE_PUSH other than 0")
		}
	case http2.SettingMaxConcurrentStreams:
		c.peerStreams = v
	case http2.SettingInitialWindowSize:
		if v > maxWindow {
			return connErr(http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1")
		}
		delta := int64(v) - c.peerWindow
		c.peerWindow = int64(v)
		for slot, id := range c.ids {
			if id != 0 {
				c.streams[slot].sendWin += delta
				if c.streams[slot].sendWin > maxWindow {
					return connErr(http2.ErrCodeFlowControl, "stream send window above 2^31-1")
				}
			}
		}
	case http2.SettingMaxFrameSize:
		if v < DefaultMaxFrameSize || v > MaxFrameSizeLimit {
			return connErr(http2.ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE out of range")
		}
		c.peerFrame = int(v)
	}
	// SETTINGS_HEADER_TABLE_SIZE sizes the server's decoder table, which
	// the request block never uses; SETTINGS_MAX_HEADER_LIST_SIZE is
	// advisory; unknown settings are ignored.
	return nil
}

// endFrame acts on a completely read frame.
func (c *Conn) endFrame() error {
	fh := &c.fh
	switch fh.typ {
	case http2.FrameData:
		if slot := c.cur; slot >= 0 {
			if fh.flags.Has(http2.FlagDataEndStream) {
				c.finish(slot)
			} else if s := &c.streams[slot]; s.unacked >= c.cfg.StreamWindow/2 {
				c.out = appendWindowUpdate(c.out, c.ids[slot], s.unacked)
				s.recvWin += int64(s.unacked)
				s.unacked = 0
			}
		}
		if c.connUnacked >= c.cfg.ConnWindow/2 {
			c.out = appendWindowUpdate(c.out, 0, c.connUnacked)
			c.recvConn += int64(c.connUnacked)
			c.connUnacked = 0
		}
	case http2.FrameHeaders, http2.FrameContinuation:
		if fh.flags.Has(http2.FlagHeadersEndHeaders) { // the same bit for both
			return c.headerBlock()
		}
	case http2.FrameSettings:
		if fh.flags.Has(http2.FlagSettingsAck) {
			return nil
		}
		c.out = appendFrameHeader(c.out, 0, http2.FrameSettings, http2.FlagSettingsAck, 0)
		c.preface = true
		c.settingsN++
		if c.blocked > 0 {
			c.sendBlocked()
		}
	case http2.FramePing:
		if !fh.flags.Has(http2.FlagPingAck) {
			c.out = appendPingAck(c.out, &c.fix)
		}
	case http2.FrameGoAway:
		c.onGoAway(binary.BigEndian.Uint32(c.fix[:4])&0x7fffffff, http2.ErrCode(binary.BigEndian.Uint32(c.fix[4:8])))
	case http2.FrameRSTStream:
		if slot := c.lookup(fh.stream); slot >= 0 {
			code := http2.ErrCode(binary.BigEndian.Uint32(c.fix[:4]))
			c.release(slot)
			if code == http2.ErrCodeRefusedStream {
				c.h.Refused(slot, code)
			} else {
				c.h.Reset(slot, code)
			}
		}
	case http2.FrameWindowUpdate:
		incr := int64(binary.BigEndian.Uint32(c.fix[:4]) & 0x7fffffff)
		if incr == 0 {
			return connErr(http2.ErrCodeProtocol, "WINDOW_UPDATE with a zero increment")
		}
		if fh.stream == 0 {
			c.sendConn += incr
			if c.sendConn > maxWindow {
				return connErr(http2.ErrCodeFlowControl, "connection send window above 2^31-1")
			}
		} else if slot := c.lookup(fh.stream); slot >= 0 {
			s := &c.streams[slot]
			s.sendWin += incr
			if s.sendWin > maxWindow {
				return connErr(http2.ErrCodeFlowControl, "stream send window above 2^31-1")
			}
		}
		if c.blocked > 0 {
			c.sendBlocked()
		}
	}
	return nil
}

// headerBlock decodes the complete header block of stream c.blockID.
func (c *Conn) headerBlock() error {
	id := c.blockID
	c.blockID = 0
	status, err := c.dec.decode(c.block)
	switch err {
	case nil:
	case errStatusPos, errStatusValue:
		return connErr(http2.ErrCodeProtocol, err.Error())
	default:
		return connErr(http2.ErrCodeCompression, err.Error())
	}
	slot := c.lookup(id)
	if slot < 0 {
		return nil // a cancelled stream: the table is kept in step, nothing to report
	}
	s := &c.streams[slot]
	switch {
	case s.final: // trailers
		if status != 0 || !c.blockEnd {
			return connErr(http2.ErrCodeProtocol, "trailers with :status or without END_STREAM")
		}
		c.finish(slot)
	case status == 0:
		return connErr(http2.ErrCodeProtocol, "response headers without :status")
	case status < 200:
		if status == 101 || c.blockEnd {
			return connErr(http2.ErrCodeProtocol, "101 or END_STREAM on an informational response")
		}
	default:
		s.final = true
		c.h.Response(slot, status)
		if c.blockEnd {
			c.finish(slot)
		}
	}
	return nil
}

// finish ends slot's stream after the server's END_STREAM.
func (c *Conn) finish(slot int) {
	if s := &c.streams[slot]; s.bodyOff < len(s.tmpl.body) {
		// The server answered before the whole request body was sent: stop
		// sending and close our half (RFC 9113 section 8.1).
		c.out = appendRSTStream(c.out, c.ids[slot], http2.ErrCodeCancel)
	}
	c.release(slot)
	c.h.Done(slot)
}

// onGoAway handles the server's GOAWAY.
func (c *Conn) onGoAway(last uint32, code http2.ErrCode) {
	c.goAway = true
	c.h.GoAway(last, code)
	for slot, id := range c.ids {
		if id > last {
			c.release(slot)
			c.h.Refused(slot, code)
		}
	}
}
