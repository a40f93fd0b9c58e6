package units

import (
	"math"
	"testing"
)

func TestMicros(t *testing.T) {
	for us, want := range map[int64]string{
		0: "0 µs", 850: "850 µs", 999: "999 µs", 1000: "1.00 ms", 1250: "1.25 ms", 9994: "9.99 ms",
		10_000: "10 ms", 125_400: "125 ms", 999_499: "999 ms", 1_000_000: "1.00 s", 12_345_678: "12.35 s",
	} {
		if got := Micros(us); got != want {
			t.Errorf("Micros(%d) = %q, want %q", us, got, want)
		}
	}
}

func TestRateAndInt(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 0.26: "0.3", 9.94: "9.9", 10: "10", 999.6: "1,000", 28231: "28,231", 1234567.4: "1,234,567",
		math.NaN(): "-", math.Inf(1): "-",
	} {
		if got := Rate(f); got != want {
			t.Errorf("Rate(%v) = %q, want %q", f, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 7: "7", 100: "100", 1000: "1,000", -1000: "-1,000", -999: "-999", 123456789: "123,456,789", math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := Int(n); got != want {
			t.Errorf("Int(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.50 KiB", 12845056: "12.25 MiB", 2 << 30: "2.00 GiB"} {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", b, got, want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "2GiB": 2 << 30, "512MiB": 512 << 20, "1.5G": 3 << 29, "64K": 64 << 10,
		" 2 GiB ": 2 << 30, "100MB": 100_000_000, "1KB": 1000, "1TiB": 1 << 40, "3B": 3, "0MiB": 0,
	} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1", "-1MiB", "NaN", "Inf", "1e30GiB", "two", "0x10", "1_000", "5 apples", "1.2.3M"} {
		if got, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", bad, got)
		}
	}
	for _, n := range []int64{0, 1, 1000, 1 << 10, 3 << 29, 2 << 30, 5 << 40, 1<<20 + 1} {
		back, err := ParseBytes(FormatBytes(n))
		if err != nil || back != n {
			t.Errorf("ParseBytes(FormatBytes(%d) = %q) = %d, %v", n, FormatBytes(n), back, err)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0", "2GiB", "1.5G", "100MB", "-1", "NaN", "1e300K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err != nil {
			return
		}
		if n < 0 || n > 1<<62 {
			t.Fatalf("ParseBytes(%q) = %d: out of range", s, n)
		}
		if back, err := ParseBytes(FormatBytes(n)); err != nil || back != n {
			t.Fatalf("round trip of %d via %q: %d, %v", n, FormatBytes(n), back, err)
		}
	})
}
