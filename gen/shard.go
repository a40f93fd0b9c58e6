package gen

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"
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
func (s Shard) Share(total int) int { return share(total, s.Index, s.count()) }

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

// validateStart checks the shard and the start time. A start time already
// past by more than the tolerance is refused here, before any work: the
// run would not be synchronised with its other shards.
func (c *Config) validateStart(now time.Time) error {
	if err := c.Shard.validate(); err != nil {
		return err
	}
	if n := c.Shard.count(); n > 1 && c.Connections < n {
		return fieldErr("Connections", "%d connections cannot be split over %d shards: every shard needs at least one", c.Connections, n)
	}
	if n := c.Shard.count(); n > 1 && c.Requests > 0 && c.Requests < n {
		return fieldErr("Requests", "%d requests cannot be split over %d shards: every shard needs at least one", c.Requests, n)
	}
	if c.StartTolerance < 0 {
		return fieldErr("StartTolerance", "must be >= 0 (got %v)", c.StartTolerance)
	}
	if c.StartAt.IsZero() {
		return nil
	}
	tol := c.startTolerance()
	switch ahead := c.StartAt.Sub(now); {
	case ahead < -tol:
		return fieldErr("StartAt", "%s is %v in the past (tolerance %v): give a time far enough ahead for every shard to be ready",
			c.StartAt.UTC().Format(time.RFC3339Nano), (-ahead).Round(time.Millisecond), tol)
	case ahead > maxStartAhead:
		return fieldErr("StartAt", "%s is %v ahead, more than %v: check the date and time zone",
			c.StartAt.UTC().Format(time.RFC3339Nano), ahead.Round(time.Second), maxStartAhead)
	}
	return nil
}

func (c *Config) startTolerance() time.Duration {
	if c.StartTolerance == 0 {
		return DefaultStartTolerance
	}
	return c.StartTolerance
}

// shardConnections is this shard's part of Config.Connections.
func (c *Config) shardConnections() int { return c.Shard.Share(c.Connections) }

// shardRate is this shard's part of Config.Rate, requests/s.
func (c *Config) shardRate() float64 { return c.Rate / float64(c.Shard.count()) }

// startSpin is how long before the start time awaitStart stops sleeping
// and polls the clock: a timer alone wakes late by the scheduler's latency.
const startSpin = 2 * time.Millisecond

// awaitStart waits for Config.StartAt, once the run is ready (target
// probed, loops built and pinned), and makes it the run's time origin:
// request j is due at StartAt + j/Rate in every shard, however late this
// process got there within the tolerance. A run ready later than the
// tolerance fails instead of running unsynchronised with its shards.
// Without StartAt it does nothing (the origin is set when the loops go).
func (r *run) awaitStart(ctx context.Context) error {
	cfg := r.cfg
	// The wall clock alone: every shard's clock is its machine's wall
	// clock, and the origin's wall time must be the start time exactly.
	at := cfg.StartAt.Round(0)
	if at.IsZero() {
		return nil
	}
	if d := time.Until(at) - startSpin; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted before the start time %s: %w", at.UTC().Format(time.RFC3339Nano), ctx.Err())
		case <-t.C:
		}
	}
	for time.Until(at) > 0 {
		runtime.Gosched()
	}
	now := time.Now()
	late := now.Sub(at) // wall clock: at has no monotonic reading
	if tol := cfg.startTolerance(); late > tol {
		who := "the run"
		if s := cfg.Shard.String(); s != "" {
			who = "shard " + s
		}
		return fmt.Errorf("%s was ready %v after its start time %s (tolerance %v), so it would not run in step with its other shards: give a start time further ahead",
			who, late.Round(10*time.Microsecond), at.UTC().Format(time.RFC3339Nano), tol)
	}
	// The origin: now's monotonic clock, at's wall clock.
	r.start = now.Add(-late)
	return nil
}

// abortStart ends a run whose loops are ready but must not start: they
// see the failure when released and return without sending.
func (r *run) abortStart(err error) {
	r.failMu.Lock()
	if r.failErr == nil {
		r.failErr = err
	}
	r.failMu.Unlock()
}
