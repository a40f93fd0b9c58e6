package backend

import "time"

// staller holds requests inside periodic stall windows
// [start+k*every, start+k*every+dur), k >= 1 (see the package doc).
type staller struct {
	start time.Time
	every time.Duration
	dur   time.Duration
}

// remaining returns how long a request arriving at now must wait for the
// current window to end, or 0 outside every window.
func (s *staller) remaining(now time.Time) time.Duration {
	if s.every <= 0 {
		return 0
	}
	el := now.Sub(s.start)
	if el < s.every {
		return 0
	}
	if phase := el % s.every; phase < s.dur {
		return s.dur - phase
	}
	return 0
}

// wait blocks until no window is open, or until done is closed.
func (s *staller) wait(done <-chan struct{}) {
	if s.every <= 0 {
		return
	}
	d := s.remaining(time.Now())
	if d <= 0 {
		return
	}
	sleep(d, done)
}

// sleep waits d, returning early when done is closed (nil done never is).
func sleep(d time.Duration, done <-chan struct{}) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-done:
		t.Stop()
	}
}
