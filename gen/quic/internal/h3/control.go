package h3

import (
	"errors"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
)

// frameGoAway is HTTP/3's GOAWAY frame type (RFC 9114 §7.2.6).
const frameGoAway = 0x07

// ErrControl is a malformed frame on the server's control stream
// (H3_FRAME_ERROR).
var ErrControl = errors.New("h3: malformed frame on the server's control stream")

// Control parses the server's control stream (RFC 9114 §6.2.1): its
// stream type, then frames, of which it keeps only GOAWAY's stream ID;
// the others are skipped. A stream whose type is not the control
// stream's (0x00) is not parsed further (NotControl). Its zero value is
// ready; Reset before the next connection. Not safe for concurrent use.
type Control struct {
	// NotControl: the stream's type was read and is not 0x00.
	NotControl bool
	// GoAway: a GOAWAY frame was read; GoAwayID is the last one's ID
	// (the first request stream the server will not process).
	GoAway   bool
	GoAwayID uint64

	hdr     [16]byte // a stream type or frame header split across calls
	nhdr    int
	typed   bool // the stream type was read
	inFrame bool
	ftype   uint64
	remain  uint64
	payload [8]byte // GOAWAY's payload
	npay    int
}

// Reset prepares c for another stream.
func (c *Control) Reset() { *c = Control{} }

// Feed consumes the next in-order bytes of the stream.
func (c *Control) Feed(data []byte) error {
	for len(data) > 0 && !c.NotControl {
		if c.inFrame {
			k := int(min(c.remain, uint64(len(data))))
			if c.ftype == frameGoAway {
				c.npay += copy(c.payload[c.npay:], data[:k])
			}
			data = data[k:]
			c.remain -= uint64(k)
			if c.remain == 0 {
				if err := c.end(); err != nil {
					return err
				}
			}
			continue
		}
		// A stream type or a frame header, possibly split across calls.
		k := copy(c.hdr[c.nhdr:], data)
		buf := c.hdr[:c.nhdr+k]
		var t, l uint64
		var n int
		if !c.typed {
			t, n = wire.ReadVarint(buf)
		} else {
			t, l, n = frameHeader(buf)
		}
		if n == 0 {
			if len(buf) == len(c.hdr) {
				return ErrControl
			}
			c.nhdr = len(buf)
			return nil // all of data is in hdr
		}
		data = data[n-c.nhdr:]
		c.nhdr = 0
		if !c.typed {
			c.typed = true
			c.NotControl = t != streamControl
			continue
		}
		if t == frameGoAway && (l == 0 || l > uint64(len(c.payload))) {
			return ErrControl
		}
		c.inFrame, c.ftype, c.remain, c.npay = true, t, l, 0
		if l == 0 {
			if err := c.end(); err != nil {
				return err
			}
		}
	}
	return nil
}

// end finishes the current frame.
func (c *Control) end() error {
	c.inFrame = false
	if c.ftype != frameGoAway {
		return nil
	}
	id, n := wire.ReadVarint(c.payload[:c.npay])
	if n == 0 || n != c.npay {
		return ErrControl
	}
	c.GoAway, c.GoAwayID = true, id
	return nil
}
