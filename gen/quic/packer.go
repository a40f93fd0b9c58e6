package quic

import (
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/h3"
	"github.com/loadlab/loadlab/gen/quic/internal/wire"
)

// The packer: what is due goes out in one datagram, a packet per level
// (conn.go and framer.go decide what is due).

// flush appends at most one datagram with what is due: ACKs, the
// client's CRYPTO data, the request, a CONNECTION_CLOSE.
func (c *Conn) flush(now time.Time, out []byte) []byte {
	if c.closed {
		return out
	}
	start := len(out)
	dcid := c.dcid[:c.dcidLen]
	hsReady := c.lv[lvlHandshake].seal.Ready()
	ackEliciting, appSent := false, false

	// Initial: only until the Handshake keys are known; then the client
	// drops them (RFC 9001 §4.9.1) once it sends a Handshake packet.
	if l := &c.lv[lvlInitial]; l.seal.Ready() && !hsReady && (l.acks.pending > 0 || c.sendCrypto[0] || c.closeAs != nil) {
		b, lenOff, pnOff := wire.AppendLongHeader(out, wire.Initial, dcid, c.scid, c.token, l.nextPN)
		if l.acks.n > 0 {
			b = l.acks.appendAck(b, now)
		}
		if c.closeAs != nil {
			b = c.appendClose(b, false)
		} else if c.sendCrypto[0] {
			b = wire.AppendCrypto(b, 0, c.sent[0])
			c.sendCrypto[0] = false
			ackEliciting = true
			c.initialSentAt = now
		}
		// Pad inside the packet to MinDatagram.
		if pad := MinDatagram - (len(b) - start) - wire.Overhead; pad > 0 {
			b = append(b, zeros[:pad]...)
		}
		out = l.seal.Seal(b, start, lenOff, pnOff, l.nextPN)
		l.nextPN++
	}
	if l := &c.lv[lvlHandshake]; hsReady && (l.acks.pending > 0 || c.sendCrypto[1] || c.sendPing || c.closeAs != nil && !c.lv[lvlApp].seal.Ready()) {
		c.lv[lvlInitial].seal.Drop()
		c.lv[lvlInitial].open.Drop()
		p0 := len(out)
		b, lenOff, pnOff := wire.AppendLongHeader(out, wire.Handshake, dcid, c.scid, nil, l.nextPN)
		if l.acks.n > 0 {
			b = l.acks.appendAck(b, now)
		}
		if c.closeAs != nil && !c.lv[lvlApp].seal.Ready() {
			b = c.appendClose(b, false)
		} else {
			if c.sendCrypto[1] {
				b = wire.AppendCrypto(b, 0, c.sent[1])
				c.sendCrypto[1] = false
				ackEliciting = true
			}
			if c.sendPing {
				b = append(b, wire.FramePing)
				c.sendPing = false
				ackEliciting = true
			}
		}
		out = l.seal.Seal(b, p0, lenOff, pnOff, l.nextPN)
		l.nextPN++
	}
	// 1-RTT: a MAX_DATA goes out at once while a response arrives or
	// when it is sent again on a probe timeout; between requests a new
	// one waits to ride on the next packet (the request's).
	if l := &c.lv[lvlApp]; l.seal.Ready() && (c.ackDue(now) || c.sendReq || c.closeQueue || c.closeAs != nil || c.sendMaxData && (!c.done || c.maxDataOut)) {
		p0 := len(out)
		pn := l.nextPN
		b, pnOff := wire.AppendShortHeader(out, dcid, c.phase, pn)
		if l.acks.n > 0 && (l.acks.pending > 0 || c.closeQueue) {
			b = l.acks.appendAck(b, now)
			c.ackAt = time.Time{}
		}
		c.ackNow = false
		if c.sendMaxData && c.closeAs == nil && !c.closeQueue {
			b = wire.AppendMaxData(b, c.recvMax)
			c.sendMaxData, c.maxDataOut, c.maxDataPN = false, true, pn
			ackEliciting, appSent = true, true
		}
		switch {
		case c.closeAs != nil:
			b = c.appendClose(b, true)
		case c.closeQueue:
			b = wire.AppendConnectionClose(b, true, h3.H3NoError, "")
		case c.sendReq:
			cfg := c.cl.cfg
			c.reqCtrl = !c.ctrlAcked
			if c.reqCtrl {
				b = wire.AppendStream(b, streamControl, 0, cfg.control, false)
			}
			b = wire.AppendStream(b, c.reqID, 0, cfg.request, true)
			c.sendReq, c.reqSent = false, true
			c.reqPN = pn
			ackEliciting, appSent = true, true
		}
		out = l.seal.Seal(b, p0, -1, pnOff, pn)
		l.nextPN++
	}
	if c.closeAs != nil {
		c.closeErr(c.closeAs)
	} else if c.closeQueue {
		c.closed, c.ptoAt, c.ackAt = true, time.Time{}, time.Time{}
	} else if ackEliciting {
		d := c.pto()
		if appSent {
			// The server may delay its ACK of 1-RTT packets by its
			// max_ack_delay (RFC 9002 §6.2.1).
			d += time.Duration(c.peer.MaxAckDelay) * time.Millisecond
		}
		c.ptoAt = now.Add(d)
	} else if c.confirmed && !c.inFlight() {
		c.ptoAt = time.Time{} // nothing of the client's is in flight
	}
	return out
}

// inFlight reports whether something the client sent in 1-RTT packets
// awaits an acknowledgement: the request (its first one also the
// control stream) or a MAX_DATA.
func (c *Conn) inFlight() bool {
	return c.curOpen && !c.reqAcked || c.maxDataOut
}

// ackDue reports whether a 1-RTT ACK must go out now. While a response
// is arriving (or before the handshake's end) every second ack-eliciting
// packet is acknowledged at once, which the server's congestion control
// needs; once the response is Done (keep-alive) the ACK waits for the
// next request's packet, or for the delayed-ACK timer (ackDelay, below
// the max_ack_delay the client advertises) if that comes first
// (RFC 9000 §13.2.1 allows delaying up to max_ack_delay).
func (c *Conn) ackDue(now time.Time) bool {
	p := c.lv[lvlApp].acks.pending
	if p == 0 {
		return false
	}
	return c.ackNow || !now.Before(c.ackAt) || p >= 2 && !(c.keepAlive && c.done)
}

// zeros are PADDING frames.
var zeros [MinDatagram]byte

// appendClose appends the CONNECTION_CLOSE for the client's own error:
// an application H3 code only in 1-RTT packets (RFC 9000 §10.2.3).
func (c *Conn) appendClose(b []byte, app bool) []byte {
	e := c.closeAs
	code := e.Code
	switch {
	case e.App && !app:
		code = 0x0c // APPLICATION_ERROR
	case e.Class == ClassConnIDRetired:
		code = 0 // NO_ERROR
	case code == 0:
		code = codeProtocolViolate
	}
	return wire.AppendConnectionClose(b, e.App && app, code, "")
}
