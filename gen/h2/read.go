package h2

import (
	"encoding/binary"
	"errors"

	"golang.org/x/net/http2"
)

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
			if c.ctlN > MaxQueuedControlFrames {
				return c.fail(errCalm)
			}
		}
	}
	return nil
}

// errCalm ends a connection whose server asks for more control frames than
// it reads.
var errCalm = connErr(http2.ErrCodeEnhanceYourCalm, "the server made the generator queue more than 10000 control frames (SETTINGS and PING acknowledgements, WINDOW_UPDATE, RST_STREAM) without reading them")

// fail records a connection error and queues the GOAWAY that reports it.
func (c *Conn) fail(err error) error {
	code := http2.ErrCodeInternal
	var ce *ConnError
	if errors.As(err, &ce) {
		code = ce.Code
	}
	c.out = appendGoAway(c.out, 0, code)
	c.control()
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
				c.control()
				s.recvWin += int64(s.unacked)
				s.unacked = 0
			}
		}
		if c.connUnacked >= c.cfg.ConnWindow/2 {
			c.out = appendWindowUpdate(c.out, 0, c.connUnacked)
			c.control()
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
		c.control()
		c.preface = true
		c.settingsN++
		if c.blocked > 0 {
			c.sendBlocked()
		}
	case http2.FramePing:
		if !fh.flags.Has(http2.FlagPingAck) {
			c.out = appendPingAck(c.out, &c.fix)
			c.control()
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
		c.control()
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
