// Package prefixint is the prefixed integer of HPACK (RFC 7541 §5.1), which
// QPACK (RFC 9204 §4.1.1) uses unchanged: the value's low bits in the first
// byte's n-bit prefix, the rest in 7-bit groups. gen/h2's HPACK and
// gen/quic's QPACK both use this one copy. No allocation; safe for
// concurrent use.
package prefixint

import "errors"

var (
	// ErrTruncated: the input ended inside the integer.
	ErrTruncated = errors.New("prefixed integer truncated")
	// ErrOverflow: the integer needs 63 bits or more (x/net/http2/hpack's
	// limit).
	ErrOverflow = errors.New("prefixed integer overflows")
)

// Append appends v with an n-bit prefix (1 <= n <= 8); first carries the
// first byte's other bits (the representation's flags).
func Append(b []byte, n uint, first byte, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(max))
	v -= max
	for v >= 128 {
		b = append(b, byte(v&0x7f)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// Read reads an integer with an n-bit prefix from the start of p and says
// how many bytes it took.
func Read(p []byte, n uint) (v uint64, used int, err error) {
	if len(p) == 0 {
		return 0, 0, ErrTruncated
	}
	max := uint64(1)<<n - 1
	v = uint64(p[0]) & max
	if v < max {
		return v, 1, nil
	}
	var m uint
	for i := 1; i < len(p); i++ {
		b := p[i]
		v += uint64(b&127) << m
		if b&128 == 0 {
			return v, i + 1, nil
		}
		m += 7
		if m >= 63 {
			return 0, 0, ErrOverflow
		}
	}
	return 0, 0, ErrTruncated
}
