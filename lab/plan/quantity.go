package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/internal/units"
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
// "512MiB", "0" = none) in YAML and JSON (internal/units reads and writes
// it).
type ByteSize int64

// MarshalText writes s with the largest binary unit that divides it.
func (s ByteSize) MarshalText() ([]byte, error) { return []byte(units.FormatBytes(int64(s))), nil }

// UnmarshalText reads "2GiB", "512MiB", "1G" or a plain byte count.
func (s *ByteSize) UnmarshalText(b []byte) error {
	v, err := units.ParseBytes(string(b))
	if err != nil {
		return fmt.Errorf("bad memory size %q: write it like 2GiB, 512MiB or 0 for no limit", strings.TrimSpace(string(b)))
	}
	*s = ByteSize(v)
	return nil
}
