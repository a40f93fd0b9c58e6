package prefixint

import (
	"errors"
	"testing"
)

// RFC 7541 C.1's examples, and the round trip of values around each
// prefix's boundary.
func TestRFC7541Examples(t *testing.T) {
	for _, c := range []struct {
		n    uint
		v    uint64
		want []byte
	}{
		{5, 10, []byte{0x0a}},
		{5, 1337, []byte{0x1f, 0x9a, 0x0a}},
		{8, 42, []byte{0x2a}},
	} {
		got := Append(nil, c.n, 0, c.v)
		if string(got) != string(c.want) {
			t.Errorf("Append(%d, %d) = %x, want %x", c.n, c.v, got, c.want)
		}
		v, used, err := Read(append(got, 0xff), c.n)
		if err != nil || v != c.v || used != len(c.want) {
			t.Errorf("Read(%x) = %d, %d, %v", got, v, used, err)
		}
	}
	for n := uint(1); n <= 8; n++ {
		for _, v := range []uint64{0, 1<<n - 2, 1<<n - 1, 1 << n, 127 + 1<<n, 1 << 40} {
			b := Append(nil, n, 0xff<<n, v)
			if got, used, err := Read(b, n); err != nil || got != v || used != len(b) {
				t.Errorf("n=%d v=%d: %x read as %d, %d, %v", n, v, b, got, used, err)
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	if _, _, err := Read(nil, 5); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := Read([]byte{0x1f, 0x80}, 5); !errors.Is(err, ErrTruncated) {
		t.Errorf("cut: %v", err)
	}
	over := []byte{0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	if _, _, err := Read(over, 5); !errors.Is(err, ErrOverflow) {
		t.Errorf("overflow: %v", err)
	}
}
