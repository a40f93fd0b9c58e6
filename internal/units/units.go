// Package units writes and reads the numbers people see: latencies in
// microseconds, rates and counts with thousands separators, and memory
// sizes with binary units. The generator's text output, the lab's progress
// lines, tables and findings, and the CLI all use these, so one number
// reads the same everywhere.
//
// Imports: a leaf of internal/ (helpers loadlab's packages share); it
// imports no other loadlab package.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Micros writes a latency given in microseconds: "850 µs" below 1 ms,
// "1.25 ms" below 10 ms, "125 ms" below 1 s, then "1.25 s".
func Micros(us int64) string {
	switch {
	case us >= 1_000_000 || us <= -1_000_000:
		return fmt.Sprintf("%.2f s", float64(us)/1e6)
	case us >= 10_000 || us <= -10_000:
		return fmt.Sprintf("%.0f ms", float64(us)/1e3)
	case us >= 1000 || us <= -1000:
		return fmt.Sprintf("%.2f ms", float64(us)/1e3)
	}
	return fmt.Sprintf("%d µs", us)
}

// Rate writes a rate with thousands separators (28,231), one decimal below
// 10, "-" for NaN or infinity.
func Rate(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	if f > 0 && f < 10 {
		return fmt.Sprintf("%.1f", f)
	}
	return Int(int64(math.Round(f)))
}

// Int writes n with thousands separators.
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	if len(digits) < len(s) {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Bytes writes a size with the largest binary unit it reaches: "512 B",
// "1.50 KiB", "12.25 MiB", "2.00 GiB".
func Bytes(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// byteUnits are the suffixes ParseBytes knows, longest first among those
// that end alike.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
}

// ParseBytes reads a memory size: a byte count ("1048576") or a number with
// a unit ("2GiB", "512MiB", "1.5G", "100MB"; K, M, G, T and KiB... are
// powers of 1024, KB, MB... powers of 1000). "0" is 0. Negative, NaN and
// sizes above 2^62 are errors.
func ParseBytes(s string) (int64, error) {
	text := strings.TrimSpace(s)
	num, mult := text, int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(text, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(text, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || strings.ContainsAny(num, "xXpP_") || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("bad size %q: write it like 2GiB, 512MiB, or a byte count", text)
	}
	return int64(v * float64(mult)), nil
}

// FormatBytes writes n with the largest binary unit that divides it
// ("2GiB", "512MiB"), else as a byte count: the form ParseBytes reads back.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Round3 rounds f to 3 decimals: the fractions and seconds results.json
// records.
func Round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// Clip shortens s to at most n bytes for a one-line message, marking the
// cut with "...".
func Clip(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}
