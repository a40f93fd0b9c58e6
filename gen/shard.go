package gen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/internal/run"
)

// Shard selects one generator's part of a run spread over several
// generator processes (machines, pods). Request j of the global schedule
// (due at start + j/rate) belongs to shard j mod Count, so the union of
// the shards is exactly the schedule one generator would have run. The
// shards share Config.Connections and Config.Requests the same way: shard
// i gets total/Count, and the first total mod Count shards one more (see
// Shard.Share). Rate, Duration, Warmup and Timeout are the whole run's and
// the same in every shard.
//
// The zero value (and Count 1) is the whole run.
type Shard struct {
	Index int // 0-based, below Count
	Count int // number of shards; 0 or 1 = not sharded
}

// maxShards bounds the shard count: far beyond any fleet a person runs, and
// small enough that the per-shard arithmetic cannot overflow.
const maxShards = 100_000

// ParseShard parses "i/N" (0 <= i < N).
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fieldErr("Shard", "bad shard %q: give INDEX/COUNT with a 0-based index, e.g. 0/4 ... 3/4", s)
	}
	sh := Shard{Index: i, Count: n}
	if n < 1 {
		return Shard{}, fieldErr("Shard", "count %d must be between 1 and %d", n, maxShards)
	}
	return sh, sh.validate()
}

func (s Shard) validate() error {
	switch {
	case s.Count == 0 && s.Index == 0:
		return nil
	case s.Count < 1 || s.Count > maxShards:
		return fieldErr("Shard", "count %d must be between 1 and %d", s.Count, maxShards)
	case s.Index < 0 || s.Index >= s.Count:
		return fieldErr("Shard", "index %d is outside 0..%d: indexes are 0-based, below the count %d", s.Index, s.Count-1, s.Count)
	}
	return nil
}

// String returns "i/N", or "" for the whole run.
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// count is the number of shards, at least 1.
func (s Shard) count() int { return max(s.Count, 1) }

// Share returns this shard's part of total (connections, requests): total
// split into Count parts that differ by at most one, the larger parts going
// to the lowest indexes. For requests this is exactly the number of j <
// total with j mod Count = Index.
func (s Shard) Share(total int) int { return run.Share(total, s.Index, s.count()) }

// Start tolerance: how late a synchronised start may be before the run
// refuses to go on unsynchronised.
const DefaultStartTolerance = 25 * time.Millisecond

// maxStartAhead bounds how far ahead a start time may be: further is
// almost certainly a typo (a wrong date or time zone).
const maxStartAhead = 24 * time.Hour

// ParseStartAt parses a start time: RFC 3339 with optional sub-second
// precision ("2026-05-01T12:00:00.250Z", "2026-05-01T14:00:00+02:00"), or
// "+DURATION" relative to now ("+5s", "+1m30s"). A relative time is each
// process's own: processes that must start together need one absolute time.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fieldErr("StartAt", "bad start time %q: +DURATION needs a duration >= 0 such as +5s", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fieldErr("StartAt", "bad start time %q: give RFC 3339 (2006-01-02T15:04:05.000Z) or +DURATION (+5s)", s)
	}
	return t, nil
}
