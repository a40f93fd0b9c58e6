package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestAwaitStart: the run's origin is the start time itself (its wall
// clock, with a monotonic reading), reached from before it, on time: a
// measurement of the wait's precision, in real time.
func TestAwaitStart(t *testing.T) {
	at := time.Now().Add(80 * time.Millisecond)
	r := &Run{Spec: &Spec{StartAt: at, Shard: 1, Shards: 4, StartTolerance: 25 * time.Millisecond}}
	if err := r.awaitStart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !r.Start.Round(0).Equal(at.Round(0)) || r.Start.Round(0) == r.Start {
		t.Fatalf("origin %v (monotonic: %v), want the start time %v", r.Start, r.Start.Round(0) != r.Start, at)
	}
	if late := time.Since(at); late < 0 || late > 20*time.Millisecond {
		t.Fatalf("returned %v after the start time", late)
	}
}

// TestAwaitStartRefuses: a run ready after the start plus the tolerance
// fails and says why; within the tolerance it goes; a wait the context
// ends fails. The logic, not a measurement: in a synctest bubble.
func TestAwaitStartRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &Run{Spec: &Spec{StartAt: time.Now().Add(-100 * time.Millisecond), Shard: 1, Shards: 4, StartTolerance: 25 * time.Millisecond}}
		err := r.awaitStart(context.Background())
		if err == nil || !strings.Contains(err.Error(), "shard 1/4 was ready 100ms") || !strings.Contains(err.Error(), "(tolerance 25ms)") || !r.Start.IsZero() {
			t.Fatalf("late start: %v (origin %v)", err, r.Start)
		}
		r = &Run{Spec: &Spec{StartAt: time.Now().Add(-100 * time.Millisecond), Shards: 1, StartTolerance: time.Second}}
		if err := r.awaitStart(context.Background()); err != nil {
			t.Fatalf("late within the tolerance: %v", err)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		r = &Run{Spec: &Spec{StartAt: time.Now().Add(time.Hour), Shards: 1, StartTolerance: 25 * time.Millisecond}}
		if err := r.awaitStart(ctx); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "interrupted before the start time") {
			t.Fatalf("cancelled wait: %v", err)
		}
	})
}
