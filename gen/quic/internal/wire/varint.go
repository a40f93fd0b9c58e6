package wire

// MaxVarint is the largest value a variable-length integer holds.
const MaxVarint = 1<<62 - 1

// ReadVarint decodes the variable-length integer (RFC 9000 §16) at the
// start of b. n is 0 if b is too short.
func ReadVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, n
}

// VarintLen is the length of v's shortest encoding (v <= MaxVarint).
func VarintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	}
	return 8
}

// AppendVarint appends v (at most MaxVarint) in its shortest encoding.
func AppendVarint(b []byte, v uint64) []byte {
	switch VarintLen(v) {
	case 1:
		return append(b, byte(v))
	case 2:
		return append(b, 0x40|byte(v>>8), byte(v))
	case 4:
		return append(b, 0x80|byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, 0xc0|byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// PutVarint2 writes v (< 16384) as a two-byte varint into b[0:2]: for
// lengths filled in after the fact.
func PutVarint2(b []byte, v int) {
	b[0], b[1] = 0x40|byte(v>>8), byte(v)
}
