package gen

// schedule is one loop's share of the run's request schedule, the same for
// every engine (HTTP/1.1, HTTP/2 and HTTP/3). The global open-loop schedule is request j at start +
// j/Rate. Shard s of N (Config.Shard) takes the requests j with j mod N =
// s; loop i of that shard's L loops takes every L-th of those, so its k-th
// request is global request
//
//	j = s + N*(i + k*L)
//
// and over every shard and loop each j is taken exactly once. The intended
// time is computed from j itself, so a request is due at the same
// nanosecond whichever shard and loop sends it. Config.Requests is split
// the same way: the shard's share is the number of j < Requests of the
// shard, the loop's the number of those that are its own.
//
// The intended time of j comes from the run's pacer (pacer.at: the first
// t where the offered rate's integral reaches j; for a constant rate,
// j/Rate), and with Config.Targets request j goes to target
// cfg.targetOf(j); in closed loop, which has no intended times, the loop's k-th request still
// goes to the target of j, so targets are shared out the same way.
type schedule struct {
	open    bool
	cfg     *Prepared
	pacer   *pacer // the offered rate (nil: closed loop)
	paceAt  int    // the pacer's segment of the last intended time (a hint)
	closedK int64  // closed loop: requests started, for their targets
	first   int64  // global index of this loop's first request
	stride  int64  // global indexes between two of this loop's requests (N*L)
	seq     int64  // index of the next intended send of this loop
	nextDue int64  // intended time of request seq
	pending pendingRing
	stopAt  int64 // end of the run, ns since start
	quota   int64 // requests this loop may start; < 0 = no limit (see Config.Requests)
	started int64 // requests started so far

	tolerance int64 // Config.PacingTolerance, ns
}

// newSchedule returns loop i of nloops' schedule within the shard of cfg.
func newSchedule(cfg *Prepared, i, nloops, maxPending int) schedule {
	s := schedule{open: cfg.pacer != nil, pacer: cfg.pacer, cfg: cfg, stopAt: int64(cfg.Duration), quota: -1, tolerance: int64(cfg.PacingTolerance)}
	n := int64(cfg.Shard.count())
	s.first = int64(cfg.Shard.Index) + n*int64(i)
	s.stride = n * int64(nloops)
	if s.open {
		s.nextDue = s.intendedAt(0)
		s.pending = newPendingRing((maxPending+nloops-1)/nloops, len(cfg.reqs) > 1)
	}
	if cfg.Requests > 0 {
		s.quota = int64(share(cfg.Shard.Share(cfg.Requests), i, nloops))
	}
	return s
}

// global returns the index in the global schedule of this loop's k-th
// request.
func (s *schedule) global(k int64) int64 { return s.first + k*s.stride }

// intendedAt returns the intended time of this loop's k-th request, ns
// since the start.
func (s *schedule) intendedAt(k int64) int64 {
	return s.pacer.at(s.global(k), &s.paceAt)
}

// wakeFor returns when the loop must wake for the next intended send: at
// its intended time, or with a pacing tolerance at the first multiple of the
// tolerance (since the start) at or after it, so that the requests due
// within one tick leave together, none before its time.
func (s *schedule) wakeFor() int64 {
	if s.tolerance <= 0 {
		return s.nextDue
	}
	return (s.nextDue + s.tolerance - 1) / s.tolerance * s.tolerance
}

// due reports whether the next intended send has come (open loop), within
// the run and the request quota.
func (s *schedule) due(now int64) bool {
	return s.nextDue <= now && s.nextDue < s.stopAt && !s.quotaSpent()
}

// take hands out the next intended send time and its target, and advances
// the schedule.
func (s *schedule) take() (int64, int32) {
	due, tgt := s.nextDue, s.cfg.targetOf(s.global(s.seq))
	s.seq++
	s.nextDue = s.intendedAt(s.seq)
	return due, tgt
}

// closedTarget returns the target of the loop's next closed-loop request.
func (s *schedule) closedTarget() int32 {
	t := s.cfg.targetOf(s.global(s.closedK))
	s.closedK++
	return t
}

// quotaSpent reports whether the loop has started (or queued) every request
// Config.Requests allows it.
func (s *schedule) quotaSpent() bool {
	return s.quota >= 0 && s.started+int64(s.pending.len()) >= s.quota
}

// enqueue puts a due request in the pending queue. When the queue is full
// the request that has waited longest is given up as dropped, with the wait
// it had when it was evicted: under sustained overload the latency then
// shows the queue instead of being capped by it.
func (s *schedule) enqueue(rec *recorder, due int64, tgt int32, now int64) {
	if s.pending.full() {
		old, otgt := s.pending.pop()
		s.started++ // it had its turn: the quota counts it
		if rec.owed(old) {
			rec.dropped++
		}
		rec.fail(otgt, ErrDropped, errDropped, old, now)
	}
	s.pending.push(due, tgt)
}

// abandonPending gives up every pending request at now as class, err (a
// timeout: the drain is over; or the loop broke down) and returns how many
// there were.
func (s *schedule) abandonPending(rec *recorder, now int64, class ErrorClass, err error) int64 {
	n := int64(s.pending.len())
	for s.pending.len() > 0 {
		due, tgt := s.pending.pop()
		rec.fail(tgt, class, err, due, now)
	}
	return n
}
