package wire

import "errors"

// Frame types of version 1 (RFC 9000 §19) that this client parses.
const (
	FramePadding            = 0x00
	FramePing               = 0x01
	FrameAck                = 0x02
	FrameAckECN             = 0x03
	FrameResetStream        = 0x04
	FrameStopSending        = 0x05
	FrameCrypto             = 0x06
	FrameNewToken           = 0x07
	FrameStream             = 0x08 // 0x08..0x0f: OFF, LEN, FIN bits
	FrameMaxData            = 0x10
	FrameMaxStreamData      = 0x11
	FrameMaxStreamsBidi     = 0x12
	FrameMaxStreamsUni      = 0x13
	FrameDataBlocked        = 0x14
	FrameStreamDataBlocked  = 0x15
	FrameStreamsBlockedBidi = 0x16
	FrameStreamsBlockedUni  = 0x17
	FrameNewConnectionID    = 0x18
	FrameRetireConnectionID = 0x19
	FramePathChallenge      = 0x1a
	FramePathResponse       = 0x1b
	FrameConnectionClose    = 0x1c
	FrameConnectionCloseApp = 0x1d
	FrameHandshakeDone      = 0x1e
)

// Frame is one parsed frame; which fields are set depends on Type
// (STREAM frames have Type FrameStream, their bits decoded into Fin).
// Slices point into the packet.
type Frame struct {
	Type uint64
	// STREAM, CRYPTO (StreamID 0), RESET_STREAM (Offset: final size).
	StreamID, Offset uint64
	Data             []byte
	Fin              bool
	// ACK: the largest acknowledged, the delay, the first range. Ranges
	// holds the rest, unparsed (validated).
	Largest, Delay, FirstRange uint64
	// CONNECTION_CLOSE (and RESET_STREAM's error code).
	ErrorCode, FrameType uint64
	Reason               []byte
	// NEW_CONNECTION_ID: the Retire Prior To field (its sequence number
	// is in Offset, the connection ID in Data).
	RetirePriorTo uint64
}

// ErrFrame is a malformed or unknown frame: the connection fails with
// FRAME_ENCODING_ERROR.
var ErrFrame = errors.New("quic: malformed or unknown frame from the server")

// reader reads varints with a sticky failure.
type reader struct {
	b   []byte
	p   int
	bad bool
}

func (r *reader) v() uint64 {
	x, n := ReadVarint(r.b[r.p:])
	if n == 0 {
		r.bad = true
	}
	r.p += n
	return x
}

func (r *reader) bytes(n uint64) []byte {
	if r.bad || n > uint64(len(r.b)-r.p) {
		r.bad = true
		return nil
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s
}

// ParseFrame parses the frame at the start of b (a packet payload) into f
// and returns its length. Runs of PADDING are one frame.
func ParseFrame(b []byte, f *Frame) (int, error) {
	r := reader{b: b}
	t := r.v()
	if r.bad {
		return 0, ErrFrame
	}
	*f = Frame{Type: t}
	switch {
	case t == FramePadding:
		for r.p < len(b) && b[r.p] == 0 {
			r.p++
		}
	case t == FramePing, t == FrameHandshakeDone:
	case t == FrameAck, t == FrameAckECN:
		f.Largest, f.Delay = r.v(), r.v()
		count := r.v()
		f.FirstRange = r.v()
		if r.bad || f.FirstRange > f.Largest {
			return 0, ErrFrame
		}
		start := r.p
		for i := uint64(0); i < count && !r.bad; i++ {
			r.v()
			r.v()
		}
		f.Data = b[start:r.p]
		if t == FrameAckECN {
			r.v()
			r.v()
			r.v()
		}
	case t == FrameResetStream:
		f.StreamID, f.ErrorCode, f.Offset = r.v(), r.v(), r.v()
	case t == FrameStopSending:
		f.StreamID, f.ErrorCode = r.v(), r.v()
	case t == FrameCrypto:
		f.Offset = r.v()
		f.Data = r.bytes(r.v())
	case t == FrameNewToken:
		f.Data = r.bytes(r.v())
		if len(f.Data) == 0 {
			return 0, ErrFrame
		}
	case t >= FrameStream && t <= 0x0f:
		f.Type = FrameStream
		f.StreamID = r.v()
		if t&0x04 != 0 {
			f.Offset = r.v()
		}
		if t&0x02 != 0 {
			f.Data = r.bytes(r.v())
		} else if !r.bad {
			f.Data = b[r.p:]
			r.p = len(b)
		}
		f.Fin = t&0x01 != 0
		if f.Offset+uint64(len(f.Data)) > MaxVarint {
			return 0, ErrFrame
		}
	case t >= FrameMaxData && t <= FrameStreamsBlockedUni:
		if t == FrameMaxStreamData || t == FrameStreamDataBlocked {
			f.StreamID = r.v()
		}
		f.Offset = r.v()
	case t == FrameNewConnectionID:
		f.Offset = r.v() // sequence number
		f.RetirePriorTo = r.v()
		if f.RetirePriorTo > f.Offset {
			return 0, ErrFrame // RFC 9000 §19.15: FRAME_ENCODING_ERROR
		}
		if r.p >= len(b) {
			return 0, ErrFrame
		}
		n := b[r.p]
		r.p++
		if n < 1 || n > MaxConnIDLen {
			return 0, ErrFrame
		}
		f.Data = r.bytes(uint64(n))
		r.bytes(16) // stateless reset token
	case t == FrameRetireConnectionID:
		f.Offset = r.v()
	case t == FramePathChallenge, t == FramePathResponse:
		f.Data = r.bytes(8)
	case t == FrameConnectionClose, t == FrameConnectionCloseApp:
		f.ErrorCode = r.v()
		if t == FrameConnectionClose {
			f.FrameType = r.v()
		}
		f.Reason = r.bytes(r.v())
	default:
		return 0, ErrFrame
	}
	if r.bad {
		return 0, ErrFrame
	}
	return r.p, nil
}

// AckEliciting reports whether a frame of type t asks for an ACK.
func AckEliciting(t uint64) bool {
	return t != FramePadding && t != FrameAck && t != FrameAckECN && t != FrameConnectionClose && t != FrameConnectionCloseApp
}

// Range is an inclusive range of packet numbers.
type Range struct{ Lo, Hi uint64 }

// AppendAck appends an ACK frame for ranges (descending, disjoint, not
// adjacent, at least one) with ack delay delay (already scaled by the
// ack_delay_exponent).
func AppendAck(b []byte, ranges []Range, delay uint64) []byte {
	b = append(b, FrameAck)
	b = AppendVarint(b, ranges[0].Hi)
	b = AppendVarint(b, delay)
	b = AppendVarint(b, uint64(len(ranges)-1))
	b = AppendVarint(b, ranges[0].Hi-ranges[0].Lo)
	for i := 1; i < len(ranges); i++ {
		b = AppendVarint(b, ranges[i-1].Lo-ranges[i].Hi-2) // gap
		b = AppendVarint(b, ranges[i].Hi-ranges[i].Lo)
	}
	return b
}

// AppendCrypto appends a CRYPTO frame.
func AppendCrypto(b []byte, off uint64, data []byte) []byte {
	b = append(b, FrameCrypto)
	b = AppendVarint(b, off)
	b = AppendVarint(b, uint64(len(data)))
	return append(b, data...)
}

// AppendStream appends a STREAM frame with explicit offset and length.
func AppendStream(b []byte, id, off uint64, data []byte, fin bool) []byte {
	t := byte(FrameStream | 0x04 | 0x02)
	if fin {
		t |= 1
	}
	b = append(b, t)
	b = AppendVarint(b, id)
	b = AppendVarint(b, off)
	b = AppendVarint(b, uint64(len(data)))
	return append(b, data...)
}

// AppendMaxData appends a MAX_DATA frame.
func AppendMaxData(b []byte, max uint64) []byte {
	b = append(b, FrameMaxData)
	return AppendVarint(b, max)
}

// AppendConnectionClose appends a CONNECTION_CLOSE frame: an application
// one (0x1d) if app, else a transport one for frame type 0.
func AppendConnectionClose(b []byte, app bool, code uint64, reason string) []byte {
	if app {
		b = append(b, FrameConnectionCloseApp)
		b = AppendVarint(b, code)
	} else {
		b = append(b, FrameConnectionClose)
		b = AppendVarint(b, code)
		b = append(b, 0)
	}
	b = AppendVarint(b, uint64(len(reason)))
	return append(b, reason...)
}
