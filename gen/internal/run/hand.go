package run

import (
	"context"
	"fmt"
	"time"
)

// Hand is a run built by hand and one loop of it, driven on the caller's
// goroutine without the run's goroutines: the allocation tests and the
// benchmarks count and time one request this way.
type Hand struct {
	Run *Run
	LC  *Lifecycle
	set bool // SetUp ran
}

// NewHand builds spec's run, its engine (newEngine) and its first loop
// with spec.Connections connections (a pending queue of 1,000), nothing
// started. Close undoes it.
func NewHand(spec *Spec, newEngine NewEngine, obs []Observer) (*Hand, error) {
	r, err := newRun(context.Background(), spec)
	if err != nil {
		return nil, err
	}
	r.obs = obs
	if r.eng, err = newEngine(r); err != nil {
		r.close()
		return nil, err
	}
	lc, err := r.newLoop(0, 0, 1, 1000, spec.Connections)
	if err != nil {
		r.close()
		return nil, err
	}
	return &Hand{Run: r, LC: lc}, nil
}

// SetUp sets the loop's driver up on the calling goroutine's thread and
// starts the run's clock, past the warmup, with an hour to go.
func (h *Hand) SetUp() error {
	h.LC.stopAt = int64(time.Hour)
	if err := h.LC.D.Setup(); err != nil {
		return err
	}
	h.set = true
	h.Run.Start = time.Now()
	h.LC.warmupSeen = true
	return nil
}

// Close tears the loop down (if SetUp ran) and closes the run.
func (h *Hand) Close() {
	if h.set {
		h.LC.D.Teardown()
	}
	h.Run.close()
}

// Pump runs the loop until n more responses have completed, as the loop's
// main does (but for the stop and the per-second reports); it fails after
// 10 s without them.
func (h *Hand) Pump(n uint64) error {
	lc := h.LC
	want := lc.Rec.OK + n
	deadline := lc.Now() + int64(10*time.Second)
	for lc.Rec.OK < want {
		now := lc.Now()
		if now > deadline {
			return fmt.Errorf("no response within 10s (ok %d, errors %v, first %v)", lc.Rec.OK, lc.Rec.Errors, lc.Rec.FirstErr)
		}
		lc.D.Tick(now)
		if lc.Open {
			lc.admit(now, false)
		}
		lc.D.Wait(now, now+int64(time.Millisecond))
	}
	return nil
}
