package gen

// schedule is one loop's share of the run's request schedule, the same for
// both engines. Loop i of L takes requests i, i+L, i+2L... of the global
// open-loop schedule start + j/R, and its share of Config.Requests.
type schedule struct {
	open    bool
	period  float64 // ns between this loop's intended sends
	phase   int64   // offset of this loop's schedule
	seq     int64   // index of the next intended send of this loop
	nextDue int64   // intended time of request seq
	pending pendingRing
	stopAt  int64 // end of the run, ns since start
	quota   int64 // requests this loop may start (0 = no limit, see Config.Requests)
	started int64 // requests started so far
}

// newSchedule returns loop i of nloops' schedule.
func newSchedule(cfg *Config, i, nloops, maxPending int) schedule {
	s := schedule{open: cfg.openLoop(), stopAt: int64(cfg.Duration)}
	if s.open {
		s.period = float64(nloops) * 1e9 / cfg.Rate
		s.phase = int64(float64(i) * 1e9 / cfg.Rate)
		s.nextDue = s.phase
		s.pending = newPendingRing((maxPending + nloops - 1) / nloops)
	}
	if cfg.Requests > 0 {
		s.quota = int64(share(cfg.Requests, i, nloops))
	}
	return s
}

// share returns part i of total split into n parts that differ by at most 1.
func share(total, i, n int) int {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}

// intendedAt returns the intended time of this loop's k-th request.
func (s *schedule) intendedAt(k int64) int64 {
	return s.phase + int64(float64(k)*s.period)
}

// due reports whether the next intended send has come (open loop), within
// the run and the request quota.
func (s *schedule) due(now int64) bool {
	return s.nextDue <= now && s.nextDue < s.stopAt && !s.quotaSpent()
}

// take hands out the next intended send time and advances the schedule.
func (s *schedule) take() int64 {
	due := s.nextDue
	s.seq++
	s.nextDue = s.intendedAt(s.seq)
	return due
}

// quotaSpent reports whether the loop has started (or queued) every request
// Config.Requests allows it.
func (s *schedule) quotaSpent() bool {
	return s.quota > 0 && s.started+int64(s.pending.len()) >= s.quota
}

// enqueue puts a due request in the pending queue. When the queue is full
// the request that has waited longest is given up as dropped, with the wait
// it had when it was evicted: under sustained overload the latency then
// shows the queue instead of being capped by it.
func (s *schedule) enqueue(rec *recorder, due, now int64) {
	if s.pending.full() {
		old := s.pending.pop()
		s.started++ // it had its turn: the quota counts it
		if rec.owed(old) {
			rec.dropped++
		}
		rec.failure(ErrDropped, errDropped, old, now)
	}
	s.pending.push(due)
}

// abandonPending gives up every pending request as a timeout at now (the
// drain is over) and returns how many there were.
func (s *schedule) abandonPending(rec *recorder, now int64) int64 {
	n := int64(s.pending.len())
	for s.pending.len() > 0 {
		rec.failure(ErrTimeout, errDrained, s.pending.pop(), now)
	}
	return n
}
