package gen

import (
	"strings"
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/4": {0, 4}, "3/4": {3, 4}, " 1/2 ": {1, 2}, "0/1": {0, 1}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"4/4":        "outside 0..3",
		"-1/4":       "outside 0..3",
		"1/0":        "between 1 and",
		"0/-2":       "between 1 and",
		"1":          "INDEX/COUNT",
		"a/b":        "INDEX/COUNT",
		"1/2/3":      "INDEX/COUNT",
		"":           "INDEX/COUNT",
		"0/99999999": "between 1 and",
	} {
		_, err := ParseShard(in)
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseShard(%q): error %v, want a one-line usage error containing %q", in, err, msg)
		}
	}
	if s := (Shard{Index: 2, Count: 4}).String(); s != "2/4" {
		t.Errorf("String() = %q", s)
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"+5s":                              now.Add(5 * time.Second),
		"+0s":                              now,
		"+1m30.5s":                         now.Add(90500 * time.Millisecond),
		"2026-05-01T12:00:03.250Z":         now.Add(3250 * time.Millisecond),
		"2026-05-01T14:00:03.000001+02:00": now.Add(3*time.Second + time.Microsecond),
		"2026-05-01T12:00:03Z":             now.Add(3 * time.Second),
	} {
		got, err := ParseStartAt(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "+", "+-1s", "+5", "5s", "2026-05-01 12:00:00", "12:00:00", "2026-05-01T12:00:00"} {
		if _, err := ParseStartAt(in, now); err == nil || !IsUsage(err) {
			t.Errorf("ParseStartAt(%q): error %v, want a usage error", in, err)
		}
	}
}

func TestValidateStart(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ok := []Config{
		{Connections: 4, Shard: Shard{3, 4}},
		{Connections: 1},
		{Connections: 4, StartAt: now.Add(time.Second)},
		{Connections: 4, StartAt: now.Add(-DefaultStartTolerance / 2)}, // late within the tolerance
		{Connections: 4, StartAt: now.Add(-time.Second), StartTolerance: 2 * time.Second},
	}
	for _, c := range ok {
		if err := c.validateStart(now); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := map[string]Config{
		"cannot be split over 4 shards": {Connections: 3, Shard: Shard{0, 4}},
		"3 requests cannot be split":    {Connections: 8, Requests: 3, Shard: Shard{0, 4}},
		"outside 0..3":                  {Connections: 8, Shard: Shard{4, 4}},
		"in the past (tolerance 25ms)":  {Connections: 1, StartAt: now.Add(-time.Second)},
		"more than 24h0m0s":             {Connections: 1, StartAt: now.Add(25 * time.Hour)},
		"StartTolerance: must be >= 0":  {Connections: 1, StartTolerance: -1},
	}
	for msg, c := range bad {
		err := c.validateStart(now)
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%+v: error %v, want a usage error containing %q", c, err, msg)
		}
	}
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/4", "3/4", "4/4", "-1/2", "1/", "/", "99999/100000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			if !IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseShard(%q): %v is not a one-line usage error", s, err)
			}
			return
		}
		if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("ParseShard(%q) accepted %+v", s, sh)
		}
		if back, err := ParseShard(sh.String()); sh.Count > 1 && (err != nil || back != sh) {
			t.Fatalf("%+v does not round-trip through %q: %+v, %v", sh, sh.String(), back, err)
		}
	})
}

func FuzzParseStartAt(f *testing.F) {
	for _, s := range []string{"+5s", "+1h", "2026-05-01T12:00:03.250Z", "2026-05-01T14:00:03+02:00", "+-1s", "x"} {
		f.Add(s)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		at, err := ParseStartAt(s, now)
		if err != nil {
			if !IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseStartAt(%q): %v is not a one-line usage error", s, err)
			}
			return
		}
		if strings.HasPrefix(strings.TrimSpace(s), "+") && at.Before(now) {
			t.Fatalf("ParseStartAt(%q) = %v, before now", s, at)
		}
	})
}
