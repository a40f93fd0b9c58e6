package wire

import "errors"

// Transport parameter IDs (RFC 9000 §18.2).
const (
	paramOriginalDCID        = 0x00
	paramMaxIdleTimeout      = 0x01
	paramStatelessResetToken = 0x02
	paramMaxUDPPayloadSize   = 0x03
	paramInitialMaxData      = 0x04
	paramMaxStreamDataBidiL  = 0x05
	paramMaxStreamDataBidiR  = 0x06
	paramMaxStreamDataUni    = 0x07
	paramMaxStreamsBidi      = 0x08
	paramMaxStreamsUni       = 0x09
	paramAckDelayExponent    = 0x0a
	paramMaxAckDelay         = 0x0b
	paramDisableMigration    = 0x0c
	paramPreferredAddress    = 0x0d
	paramActiveConnIDLimit   = 0x0e
	paramInitialSCID         = 0x0f
	paramRetrySCID           = 0x10
)

// TransportParams are the transport parameters this client sends or
// reads. Zero integer fields are not sent; slices point into the parsed
// bytes.
type TransportParams struct {
	OriginalDCID, InitialSCID, RetrySCID []byte
	HasOriginalDCID, HasInitialSCID      bool
	HasRetrySCID                         bool

	MaxIdleTimeout, MaxUDPPayloadSize          uint64
	InitialMaxData                             uint64
	MaxStreamDataBidiLocal, MaxStreamDataBidiR uint64
	MaxStreamDataUni                           uint64
	MaxStreamsBidi, MaxStreamsUni              uint64
	AckDelayExponent, MaxAckDelay              uint64
	ActiveConnIDLimit                          uint64
	DisableMigration                           bool
}

// ErrParams is a malformed transport parameter block:
// TRANSPORT_PARAMETER_ERROR.
var ErrParams = errors.New("quic: malformed transport parameters from the server")

func appendParam(b []byte, id uint64, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = AppendVarint(b, id)
	b = AppendVarint(b, uint64(VarintLen(v)))
	return AppendVarint(b, v)
}

// AppendTransportParams appends a client's parameters: the integers that
// are non-zero, InitialSCID, DisableMigration.
func AppendTransportParams(b []byte, p *TransportParams) []byte {
	b = appendParam(b, paramMaxIdleTimeout, p.MaxIdleTimeout)
	b = appendParam(b, paramMaxUDPPayloadSize, p.MaxUDPPayloadSize)
	b = appendParam(b, paramInitialMaxData, p.InitialMaxData)
	b = appendParam(b, paramMaxStreamDataBidiL, p.MaxStreamDataBidiLocal)
	b = appendParam(b, paramMaxStreamDataBidiR, p.MaxStreamDataBidiR)
	b = appendParam(b, paramMaxStreamDataUni, p.MaxStreamDataUni)
	b = appendParam(b, paramMaxStreamsBidi, p.MaxStreamsBidi)
	b = appendParam(b, paramMaxStreamsUni, p.MaxStreamsUni)
	b = appendParam(b, paramAckDelayExponent, p.AckDelayExponent)
	b = appendParam(b, paramMaxAckDelay, p.MaxAckDelay)
	b = appendParam(b, paramActiveConnIDLimit, p.ActiveConnIDLimit)
	if p.DisableMigration {
		b = append(b, paramDisableMigration, 0)
	}
	b = AppendVarint(b, paramInitialSCID)
	b = AppendVarint(b, uint64(len(p.InitialSCID)))
	return append(b, p.InitialSCID...)
}

// ParseTransportParams parses a server's parameters into p (which it
// resets), checking the limits RFC 9000 §18.2 sets. Unknown parameters
// are skipped; a repeated one is an error.
func ParseTransportParams(b []byte, p *TransportParams) error {
	*p = TransportParams{AckDelayExponent: 3, MaxAckDelay: 25, MaxUDPPayloadSize: 65527, ActiveConnIDLimit: 2}
	var seen uint32
	for len(b) > 0 {
		id, n := ReadVarint(b)
		if n == 0 {
			return ErrParams
		}
		b = b[n:]
		l, n := ReadVarint(b)
		if n == 0 || uint64(len(b)-n) < l {
			return ErrParams
		}
		v := b[n : n+int(l)]
		b = b[n+int(l):]
		if id <= paramRetrySCID {
			if seen&(1<<id) != 0 {
				return ErrParams
			}
			seen |= 1 << id
		}
		var x uint64
		switch id {
		case paramOriginalDCID, paramInitialSCID, paramRetrySCID:
			if len(v) > MaxConnIDLen {
				return ErrParams
			}
			switch id {
			case paramOriginalDCID:
				p.OriginalDCID, p.HasOriginalDCID = v, true
			case paramInitialSCID:
				p.InitialSCID, p.HasInitialSCID = v, true
			default:
				p.RetrySCID, p.HasRetrySCID = v, true
			}
			continue
		case paramStatelessResetToken:
			if len(v) != 16 {
				return ErrParams
			}
			continue
		case paramDisableMigration:
			if len(v) != 0 {
				return ErrParams
			}
			p.DisableMigration = true
			continue
		case paramPreferredAddress:
			if len(v) < 4+2+16+2+1+16 {
				return ErrParams
			}
			continue
		case paramMaxIdleTimeout, paramMaxUDPPayloadSize, paramInitialMaxData, paramMaxStreamDataBidiL,
			paramMaxStreamDataBidiR, paramMaxStreamDataUni, paramMaxStreamsBidi, paramMaxStreamsUni,
			paramAckDelayExponent, paramMaxAckDelay, paramActiveConnIDLimit:
			var m int
			x, m = ReadVarint(v)
			if m == 0 || m != len(v) {
				return ErrParams
			}
		default:
			continue
		}
		switch id {
		case paramMaxIdleTimeout:
			p.MaxIdleTimeout = x
		case paramMaxUDPPayloadSize:
			if x < 1200 {
				return ErrParams
			}
			p.MaxUDPPayloadSize = x
		case paramInitialMaxData:
			p.InitialMaxData = x
		case paramMaxStreamDataBidiL:
			p.MaxStreamDataBidiLocal = x
		case paramMaxStreamDataBidiR:
			p.MaxStreamDataBidiR = x
		case paramMaxStreamDataUni:
			p.MaxStreamDataUni = x
		case paramMaxStreamsBidi:
			if x > 1<<60 {
				return ErrParams
			}
			p.MaxStreamsBidi = x
		case paramMaxStreamsUni:
			if x > 1<<60 {
				return ErrParams
			}
			p.MaxStreamsUni = x
		case paramAckDelayExponent:
			if x > 20 {
				return ErrParams
			}
			p.AckDelayExponent = x
		case paramMaxAckDelay:
			if x >= 1<<14 {
				return ErrParams
			}
			p.MaxAckDelay = x
		case paramActiveConnIDLimit:
			if x < 2 {
				return ErrParams
			}
			p.ActiveConnIDLimit = x
		}
	}
	return nil
}
