package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written as text ("30s", "1m30s") in YAML and
// JSON.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as "30s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration ("30s", "2m", "1.5s").
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q: write it like 30s, 2m or 1m30s", s)
	}
	*d = Duration(v)
	return nil
}

// ByteSize is a memory size written as bytes or with a unit ("2GiB",
// "512MiB", "0" = none) in YAML and JSON.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// MarshalText writes s with the largest binary unit that divides it.
func (s ByteSize) MarshalText() ([]byte, error) {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if s != 0 && int64(s)%u.mult == 0 {
			return []byte(strconv.FormatInt(int64(s)/u.mult, 10) + u.suffix), nil
		}
	}
	return []byte(strconv.FormatInt(int64(s), 10)), nil
}

// UnmarshalText reads "2GiB", "512MiB", "1G" or a plain byte count.
func (s *ByteSize) UnmarshalText(b []byte) error {
	text := strings.TrimSpace(string(b))
	num, mult := text, int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(text, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(text, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v*float64(mult) > math.MaxInt64/2 {
		return fmt.Errorf("bad memory size %q: write it like 2GiB, 512MiB or 0 for no limit", text)
	}
	*s = ByteSize(v * float64(mult))
	return nil
}
