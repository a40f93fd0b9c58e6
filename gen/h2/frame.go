package h2

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// Frame layout constants (RFC 9113 section 4).
const (
	frameHeaderLen = 9
	// DefaultMaxFrameSize is the SETTINGS_MAX_FRAME_SIZE every endpoint
	// starts with, and the smallest value allowed.
	DefaultMaxFrameSize = 16384
	// MaxFrameSizeLimit is the largest SETTINGS_MAX_FRAME_SIZE allowed.
	MaxFrameSizeLimit = 1<<24 - 1
	// maxWindow is the largest flow-control window (2^31-1).
	maxWindow = 1<<31 - 1
	// initialWindow is the window every stream and the connection start
	// with before SETTINGS or WINDOW_UPDATE change it.
	initialWindow = 65535
	// maxStreamID is the largest stream identifier.
	maxStreamID = 1<<31 - 1
)

// appendFrameHeader appends the 9-byte header of a frame.
func appendFrameHeader(b []byte, length int, t http2.FrameType, f http2.Flags, stream uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length),
		byte(t), byte(f),
		byte(stream>>24)&0x7f, byte(stream>>16), byte(stream>>8), byte(stream))
}

// appendSetting appends one 6-byte SETTINGS parameter.
func appendSetting(b []byte, id http2.SettingID, v uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(b, uint16(id)), v)
}

// appendWindowUpdate appends a WINDOW_UPDATE frame.
func appendWindowUpdate(b []byte, stream, incr uint32) []byte {
	b = appendFrameHeader(b, 4, http2.FrameWindowUpdate, 0, stream)
	return binary.BigEndian.AppendUint32(b, incr&0x7fffffff)
}

// appendRSTStream appends a RST_STREAM frame.
func appendRSTStream(b []byte, stream uint32, code http2.ErrCode) []byte {
	b = appendFrameHeader(b, 4, http2.FrameRSTStream, 0, stream)
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// appendGoAway appends a GOAWAY frame without debug data.
func appendGoAway(b []byte, last uint32, code http2.ErrCode) []byte {
	b = appendFrameHeader(b, 8, http2.FrameGoAway, 0, 0)
	b = binary.BigEndian.AppendUint32(b, last&0x7fffffff)
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// appendPingAck appends the acknowledgement of a PING with payload p.
func appendPingAck(b []byte, p *[8]byte) []byte {
	b = appendFrameHeader(b, 8, http2.FramePing, http2.FlagPingAck, 0)
	return append(b, p[:]...)
}

// frameHeader is a parsed frame header.
type frameHeader struct {
	length int
	typ    http2.FrameType
	flags  http2.Flags
	stream uint32
}

// parseFrameHeader decodes the 9 bytes of b.
func parseFrameHeader(b *[frameHeaderLen]byte) frameHeader {
	return frameHeader{
		length: int(b[0])<<16 | int(b[1])<<8 | int(b[2]),
		typ:    http2.FrameType(b[3]),
		flags:  http2.Flags(b[4]),
		stream: binary.BigEndian.Uint32(b[5:9]) & 0x7fffffff,
	}
}
