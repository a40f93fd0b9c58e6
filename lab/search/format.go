package search

import (
	"fmt"
	"math"
)

// FormatRate writes a rate with thousands separators (28,231), one decimal
// below 10, "-" for NaN or infinity. Progress lines, findings and tables
// all use it.
func FormatRate(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	if f > 0 && f < 10 {
		return fmt.Sprintf("%.1f", f)
	}
	return FormatInt(int64(math.Round(f)))
}

// FormatInt writes n with thousands separators.
func FormatInt(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprintf("%d", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
