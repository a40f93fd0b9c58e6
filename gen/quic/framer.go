package quic

import (
	"bytes"
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
	"github.com/loadlab/loadlab/gen/tls13"
)

// The framer: the frames of the packets the connection received, and what
// each changes (conn.go opens the packets; packer.go sends the answer).

// frames processes a packet's frames; it reports whether any asked for
// an ACK.
func (c *Conn) frames(now time.Time, lvl int, p []byte) (elicit bool, err *Error) {
	var f wire.Frame
	for len(p) > 0 {
		n, ferr := wire.ParseFrame(p, &f)
		if ferr != nil {
			return elicit, protocolError(codeFrameEncoding, false, "", ferr)
		}
		p = p[n:]
		if wire.AckEliciting(f.Type) {
			elicit = true
		}
		if lvl != lvlApp {
			switch f.Type {
			case wire.FramePadding, wire.FramePing, wire.FrameAck, wire.FrameAckECN, wire.FrameCrypto,
				wire.FrameConnectionClose:
			default:
				return elicit, protocolError(codeProtocolViolate, false, "a frame not allowed in Initial or Handshake packets", nil)
			}
		}
		switch f.Type {
		case wire.FrameCrypto:
			if lvl == lvlApp {
				continue // NewSessionTicket: not used
			}
			if err := c.cryptoData(now, lvl, f.Offset, f.Data); err != nil {
				return elicit, err
			}
		case wire.FrameAck, wire.FrameAckECN:
			if lvl == lvlApp {
				c.confirmed = true
				if f.Largest >= c.lv[lvlApp].nextPN {
					return elicit, protocolError(codeProtocolViolate, false, "an ACK of a packet the client did not send", nil)
				}
				c.acked(&f)
			}
		case wire.FrameStream:
			if err := c.streamData(f.StreamID, f.Offset, f.Data, f.Fin); err != nil {
				return elicit, err
			}
		case wire.FrameResetStream:
			if f.StreamID == c.reqID && c.curOpen && !c.done {
				return elicit, &Error{Class: ClassStreamReset, Code: f.ErrorCode, App: true, Reason: "the server reset the request stream"}
			}
		case wire.FrameMaxData:
			c.peerData = max(c.peerData, f.Offset)
		case wire.FrameMaxStreamsBidi:
			if f.Offset > 1<<60 {
				return elicit, protocolError(codeFrameEncoding, false, "MAX_STREAMS above 2^60", nil)
			}
			c.peerStreams = max(c.peerStreams, f.Offset)
		case wire.FrameNewConnectionID:
			if f.RetirePriorTo > 0 {
				// The server retires the connection ID the client uses
				// (sequence number 0): see ErrConnIDRetired.
				return elicit, ErrConnIDRetired
			}
		case wire.FrameConnectionClose, wire.FrameConnectionCloseApp:
			e := &Error{Class: ClassPeerClosed, Code: f.ErrorCode, App: f.Type == wire.FrameConnectionCloseApp, Reason: "the server closed the connection"}
			if len(f.Reason) > 0 {
				e.Reason += ": " + string(f.Reason)
			}
			c.closeErr(e)
			return elicit, nil
		case wire.FrameHandshakeDone:
			c.confirmed = true
			c.lv[lvlHandshake].seal.Drop()
			c.lv[lvlHandshake].open.Drop()
			c.sendCrypto[1] = false
		}
	}
	return elicit, nil
}

// cryptoData feeds CRYPTO bytes to the TLS handshake and installs keys as
// they become known.
func (c *Conn) cryptoData(now time.Time, lvl int, off uint64, data []byte) *Error {
	r := &c.crypto[lvl]
	d, ok := r.push(off, data)
	if !ok {
		return protocolError(0x0d, false, "too much out-of-order CRYPTO data", nil) // CRYPTO_BUFFER_EXCEEDED
	}
	tl := tls13.LevelInitial
	if lvl == lvlHandshake {
		tl = tls13.LevelHandshake
	}
	for ; d != nil; d = r.next() {
		if c.hs.Done() {
			continue // after the server's Finished: nothing is expected
		}
		var err error
		c.tlsOut, err = c.hs.ReadQUIC(tl, d, c.tlsOut[:0])
		if err != nil {
			code := uint64(codeInternal)
			if te, ok := err.(*tls13.Error); ok {
				code = codeCryptoBase + uint64(te.Alert)
			}
			return &Error{Class: ClassTLS, Code: code, Err: err}
		}
		if !c.lv[lvlHandshake].open.Ready() {
			if cs, ss := c.hs.HandshakeSecrets(); cs != nil {
				s := c.hs.Suite()
				k := c.cl.kdf(s)
				l := &c.lv[lvlHandshake]
				if err := l.seal.Set(k, s, cs); err != nil {
					return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
				}
				if err := l.open.Set(k, s, ss); err != nil {
					return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
				}
				c.sendCrypto[0] = false
				// The server has the ClientHello. Until its flight is
				// complete, a probe timeout sends a Handshake PING
				// (RFC 9002 §6.2.4).
				c.ptoCount = 0
				c.ptoAt = now.Add(c.pto())
			}
		}
		if c.hs.Done() {
			if err := c.handshakeDone(now); err != nil {
				return err
			}
		} else if len(c.tlsOut) > 0 { // a second ClientHello
			c.sent[0] = append(c.sent[0], c.tlsOut...)
			c.sendCrypto[0] = true
		}
	}
	return nil
}

// handshakeDone checks the server's transport parameters, installs the
// 1-RTT keys and queues the client's Finished and the request.
func (c *Conn) handshakeDone(now time.Time) *Error {
	c.doneAt = now
	p := &c.peer
	if err := wire.ParseTransportParams(c.hs.QUICTransportParams(), p); err != nil {
		return protocolError(codeTransportParam, false, "", err)
	}
	switch {
	case !p.HasOriginalDCID || !bytes.Equal(p.OriginalDCID, c.odcid),
		!p.HasInitialSCID || !bytes.Equal(p.InitialSCID, c.dcid[:c.dcidLen]),
		c.retried != p.HasRetrySCID,
		c.retried && !bytes.Equal(p.RetrySCID, c.retry[:c.retryN]):
		return protocolError(codeTransportParam, false, "the server's connection IDs in its transport parameters do not match", nil)
	case p.MaxStreamsBidi < 1 || p.MaxStreamsUni < 1 || p.InitialMaxData < uint64(len(c.cl.cfg.request)+len(c.cl.cfg.control)) ||
		p.MaxStreamDataBidiR < uint64(len(c.cl.cfg.request)) || p.MaxStreamDataUni < uint64(len(c.cl.cfg.control)):
		return protocolError(codeTransportParam, false, "the server's limits do not allow the request", nil)
	}
	// Stream 0 and the control stream take their credit now; the limits
	// may have risen already (MAX_STREAMS, MAX_DATA in an earlier 1-RTT
	// packet).
	c.peerStreams = max(c.peerStreams, p.MaxStreamsBidi)
	c.peerData = max(c.peerData, p.InitialMaxData)
	c.sentData = uint64(len(c.cl.cfg.request) + len(c.cl.cfg.control))
	s := c.hs.Suite()
	k := c.cl.kdf(s)
	cs, ss := c.hs.ApplicationKeys()
	l := &c.lv[lvlApp]
	if err := l.seal.Set(k, s, cs.Secret); err != nil {
		return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
	}
	if err := l.open.Set(k, s, ss.Secret); err != nil {
		return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
	}
	c.phase, c.keyUpdates = false, 0
	c.nsecret = copy(c.cSecret[:], cs.Secret)
	copy(c.sSecret[:], ss.Secret)
	c.sent[1] = append(c.sent[1][:0], c.tlsOut...)
	c.sendCrypto[1] = true
	c.sendReq = true
	c.ptoAt, c.ptoCount = time.Time{}, 0
	return nil
}

// acked handles a 1-RTT ACK frame: it marks what the client's packets
// carried (the request, the control stream, MAX_DATA) as delivered.
func (c *Conn) acked(f *wire.Frame) {
	if int64(f.Largest) > c.largestAck {
		c.largestAck = int64(f.Largest)
		c.ptoCount = 0 // RFC 9002 §6.2.1: reset on an acknowledgement
	}
	if c.curOpen && c.reqSent && !c.reqAcked && ackCovers(f, c.reqPN) {
		c.reqDelivered()
	}
	if c.maxDataOut && ackCovers(f, c.maxDataPN) {
		c.maxDataOut = false
	}
}

// reqDelivered records that the server has the current request (and the
// control stream, if it rode with it).
func (c *Conn) reqDelivered() {
	c.reqAcked = true
	if c.reqCtrl {
		c.ctrlAcked = true
	}
}

// ackCovers reports whether the ACK frame f acknowledges packet pn.
func ackCovers(f *wire.Frame, pn uint64) bool {
	hi := f.Largest
	lo := hi - f.FirstRange
	if pn > hi {
		return false
	}
	if pn >= lo {
		return true
	}
	b := f.Data
	for len(b) > 0 {
		gap, n := wire.ReadVarint(b)
		if n == 0 {
			return false
		}
		l, m := wire.ReadVarint(b[n:])
		if m == 0 || gap+2 > lo {
			return false
		}
		b = b[n+m:]
		hi = lo - gap - 2
		if l > hi {
			return false
		}
		lo = hi - l
		if pn > hi {
			return false
		}
		if pn >= lo {
			return true
		}
	}
	return false
}

// received counts the bytes from a stream's highest offset high to end
// against the connection's receive credit, and queues a MAX_DATA when
// less than half the window is left.
func (c *Conn) received(high *uint64, end uint64) *Error {
	if end <= *high {
		return nil
	}
	c.recvData += end - *high
	*high = end
	if c.recvData > c.recvMax {
		return protocolError(codeFlowControl, false, "the server sent beyond the connection's flow-control limit", nil)
	}
	if w := c.cl.cfg.Window; c.recvMax-c.recvData < w/2 {
		c.recvMax = c.recvData + w
		c.sendMaxData = true
	}
	return nil
}

// streamData handles a STREAM frame.
func (c *Conn) streamData(id, off uint64, data []byte, fin bool) *Error {
	end := off + uint64(len(data))
	switch {
	case id&3 == 3:
		return c.uniData(id, off, end, data)
	case id&3 != 0:
		return protocolError(0x05, false, "STREAM frame on a stream the server may not send on", nil) // STREAM_STATE_ERROR
	case id >= 4*c.opened:
		return protocolError(0x05, false, "STREAM frame on a request stream the client has not opened", nil)
	case id != c.reqID || !c.curOpen:
		return nil // an earlier request's stream, complete: a retransmission
	}
	r := &c.stream
	if end > c.cl.cfg.Window {
		return protocolError(codeFlowControl, false, "the server sent beyond the flow-control window", nil)
	}
	if fin && r.fin >= 0 && uint64(r.fin) != end || r.fin >= 0 && end > uint64(r.fin) {
		return protocolError(0x06, false, "the request stream's final size changed", nil) // FINAL_SIZE_ERROR
	}
	if fin {
		r.fin = int64(end)
	}
	if err := c.received(&c.streamHigh, end); err != nil {
		return err
	}
	if !c.reqAcked {
		c.reqDelivered() // the server got the request
	}
	d, ok := r.push(off, data)
	if !ok {
		return protocolError(codeFlowControl, false, "too much out-of-order stream data", nil)
	}
	for ; d != nil; d = r.next() {
		if err := c.resp.Feed(d, false); err != nil {
			return protocolError(h3FrameError, true, "", err)
		}
	}
	if r.finished() && !c.finSeen {
		c.finSeen = true
		if err := c.resp.Feed(nil, true); err != nil {
			return protocolError(h3MessageError, true, "", err)
		}
		c.done = true
		c.requests++
		if !c.keepAlive {
			c.closeQueue = true
		}
	}
	return nil
}

// uniData handles STREAM data on one of the server's unidirectional
// streams: counted for flow control; the first one's (3, the control
// stream) parsed for GOAWAY; the others' (QPACK streams, unused with a
// zero-capacity table) dropped.
func (c *Conn) uniData(id, off, end uint64, data []byte) *Error {
	i := id >> 2
	if i >= maxUniStreams {
		return protocolError(0x04, false, "the server opened more unidirectional streams than allowed", nil) // STREAM_LIMIT_ERROR
	}
	if end > uniWindow {
		return protocolError(codeFlowControl, false, "the server sent beyond a unidirectional stream's flow-control window", nil)
	}
	if err := c.received(&c.uniHigh[i], end); err != nil {
		return err
	}
	if i != 0 || c.ctlParse.NotControl {
		return nil
	}
	d, ok := c.ctl.push(off, data)
	if !ok {
		return protocolError(codeFlowControl, false, "too much out-of-order control stream data", nil)
	}
	for ; d != nil; d = c.ctl.next() {
		if err := c.ctlParse.Feed(d); err != nil {
			return protocolError(h3FrameError, true, "", err)
		}
	}
	return nil
}
