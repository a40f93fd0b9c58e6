package wire

import "errors"

// Version1 is QUIC version 1 (RFC 9000).
const Version1 = 0x00000001

// MaxConnIDLen is the longest connection ID of version 1.
const MaxConnIDLen = 20

// PacketType is a packet's kind: a long header type, or Short (1-RTT), or
// VersionNegotiation.
type PacketType uint8

// Packet types. The first four are the long header's type bits.
const (
	Initial PacketType = iota
	ZeroRTT
	Handshake
	Retry
	Short
	VersionNegotiation
)

// Header is a parsed packet header. Its slices point into the packet.
type Header struct {
	Type    PacketType
	Version uint32
	DCID    []byte
	SCID    []byte // long headers only
	// Token is an Initial's token or a Retry's retry token.
	Token []byte
	// PNOffset is where the (protected) packet number starts.
	PNOffset int
	// Len is the packet's length in the datagram: a long header's packet
	// ends there and the next coalesced packet starts; short headers,
	// Retry and Version Negotiation packets fill the datagram.
	Len int
	// Versions is a Version Negotiation packet's list (4 bytes each).
	Versions []byte
}

// Header parse errors. A datagram that fails to parse is dropped.
var (
	ErrShortPacket = errors.New("quic: packet too short")
	ErrFixedBit    = errors.New("quic: packet without the fixed bit")
	ErrConnIDLen   = errors.New("quic: connection ID longer than 20 bytes")
)

// ParseHeader parses the header of the packet at the start of b (one
// datagram's remaining bytes). shortDCIDLen is the length of the
// connection IDs this endpoint issued (a short header does not say).
// Header protection is not removed: PNOffset says where it applies.
func ParseHeader(b []byte, shortDCIDLen int) (Header, error) {
	var h Header
	if len(b) < 1 {
		return h, ErrShortPacket
	}
	if b[0]&0x80 == 0 { // short header
		if b[0]&0x40 == 0 {
			return h, ErrFixedBit
		}
		if len(b) < 1+shortDCIDLen {
			return h, ErrShortPacket
		}
		h.Type, h.DCID, h.PNOffset, h.Len = Short, b[1:1+shortDCIDLen], 1+shortDCIDLen, len(b)
		return h, nil
	}
	if len(b) < 7 {
		return h, ErrShortPacket
	}
	h.Version = uint32(b[1])<<24 | uint32(b[2])<<16 | uint32(b[3])<<8 | uint32(b[4])
	p := 5
	n := int(b[p])
	p++
	if n > MaxConnIDLen && h.Version == Version1 {
		return h, ErrConnIDLen
	}
	if len(b) < p+n+1 {
		return h, ErrShortPacket
	}
	h.DCID = b[p : p+n]
	p += n
	n = int(b[p])
	p++
	if n > MaxConnIDLen && h.Version == Version1 {
		return h, ErrConnIDLen
	}
	if len(b) < p+n {
		return h, ErrShortPacket
	}
	h.SCID = b[p : p+n]
	p += n
	if h.Version == 0 {
		h.Type, h.Versions, h.Len = VersionNegotiation, b[p:len(b)-(len(b)-p)%4], len(b)
		return h, nil
	}
	if b[0]&0x40 == 0 {
		return h, ErrFixedBit
	}
	h.Type = PacketType(b[0] >> 4 & 3)
	if h.Version != Version1 {
		// Another version's packet: not parsed further (its length
		// field may differ); it fills the datagram.
		h.Len = len(b)
		return h, nil
	}
	switch h.Type {
	case Retry:
		if len(b) < p+RetryTagLen {
			return h, ErrShortPacket
		}
		h.Token, h.Len = b[p:len(b)-RetryTagLen], len(b)
		return h, nil
	case Initial:
		tl, m := ReadVarint(b[p:])
		if m == 0 || uint64(len(b)-p-m) < tl {
			return h, ErrShortPacket
		}
		p += m
		h.Token = b[p : p+int(tl)]
		p += int(tl)
	}
	l, m := ReadVarint(b[p:])
	if m == 0 || uint64(len(b)-p-m) < l {
		return h, ErrShortPacket
	}
	p += m
	h.PNOffset, h.Len = p, p+int(l)
	return h, nil
}

// AppendLongHeader appends a version 1 long header of type t (Initial,
// Handshake) with a two-byte Length to be filled in by Keys.Seal and a
// four-byte packet number pn. token is for Initials only. It returns the
// buffer, the offset of the Length field and that of the packet number.
func AppendLongHeader(b []byte, t PacketType, dcid, scid, token []byte, pn uint64) (out []byte, lenOff, pnOff int) {
	b = append(b, 0xc0|byte(t)<<4|(PacketNumberLen-1), 0, 0, 0, 1)
	b = append(b, byte(len(dcid)))
	b = append(b, dcid...)
	b = append(b, byte(len(scid)))
	b = append(b, scid...)
	if t == Initial {
		b = AppendVarint(b, uint64(len(token)))
		b = append(b, token...)
	}
	lenOff = len(b)
	b = append(b, 0x40, 0)
	pnOff = len(b)
	b = append(b, byte(pn>>24), byte(pn>>16), byte(pn>>8), byte(pn))
	return b, lenOff, pnOff
}

// AppendShortHeader appends a 1-RTT header (spin 0, key phase as given)
// with a four-byte packet number pn; it returns the buffer and the packet
// number's offset.
func AppendShortHeader(b []byte, dcid []byte, keyPhase bool, pn uint64) (out []byte, pnOff int) {
	first := byte(0x40 | (PacketNumberLen - 1))
	if keyPhase {
		first |= 0x04
	}
	b = append(b, first)
	b = append(b, dcid...)
	pnOff = len(b)
	b = append(b, byte(pn>>24), byte(pn>>16), byte(pn>>8), byte(pn))
	return b, pnOff
}
