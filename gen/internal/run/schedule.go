package run

// Schedule is one loop's share of the run's request schedule, the same for
// every engine. Shard s of N (Spec.Shard) takes the requests j of the
// whole run's schedule with j mod N = s; loop i of that shard's L loops
// takes every L-th of those, so its k-th request is global request
//
//	j = s + N*(i + k*L)
//
// and over every shard and loop each j is taken exactly once. The intended
// time of j comes from the run's pacer (Pacer.At: for a constant rate
// j/Rate), computed from j itself, so a request is due at the same
// nanosecond whichever shard and loop sends it. Spec.Requests is split the
// same way: the shard's share is the number of j < Requests of the shard,
// the loop's the number of those that are its own. With several targets
// request j goes to target Spec.TargetOf(j); in closed loop, which has no
// intended times, the loop's k-th request still goes to the target of j,
// so targets are shared out the same way.
type Schedule struct {
	Open    bool  // open loop: the pacer says when requests are due
	Started int64 // requests started so far

	spec    *Spec
	pacer   *Pacer
	paceAt  int   // the pacer's segment of the last intended time (a hint)
	closedK int64 // closed loop: requests started, for their targets
	first   int64 // global index of this loop's first request
	stride  int64 // global indexes between two of this loop's requests (N*L)
	seq     int64 // index of the next intended send of this loop
	nextDue int64 // intended time of request seq
	pending pendingRing
	stopAt  int64 // end of the run, ns since start
	quota   int64 // requests this loop may start; < 0 = no limit (see Spec.Requests)

	tolerance int64 // Spec.PacingTolerance, ns
}

// newSchedule returns loop i of nloops' schedule within the shard of s.
func newSchedule(s *Spec, i, nloops, maxPending int) Schedule {
	sc := Schedule{Open: s.Pacer != nil, pacer: s.Pacer, spec: s, stopAt: int64(s.Duration), quota: -1, tolerance: int64(s.PacingTolerance)}
	n := int64(s.Shards)
	sc.first = int64(s.Shard) + n*int64(i)
	sc.stride = n * int64(nloops)
	if sc.Open {
		sc.nextDue = sc.intendedAt(0)
		sc.pending = newPendingRing((maxPending+nloops-1)/nloops, len(s.Reqs) > 1)
	}
	if s.Requests > 0 {
		sc.quota = int64(Share(Share(s.Requests, s.Shard, s.Shards), i, nloops))
	}
	return sc
}

// global returns the index in the global schedule of this loop's k-th
// request.
func (s *Schedule) global(k int64) int64 { return s.first + k*s.stride }

// intendedAt returns the intended time of this loop's k-th request, ns
// since the start.
func (s *Schedule) intendedAt(k int64) int64 {
	return s.pacer.At(s.global(k), &s.paceAt)
}

// wakeFor returns when the loop must wake for the next intended send: at
// its intended time, or with a pacing tolerance at the first multiple of the
// tolerance (since the start) at or after it, so that the requests due
// within one tick leave together, none before its time.
func (s *Schedule) wakeFor() int64 {
	if s.tolerance <= 0 {
		return s.nextDue
	}
	return (s.nextDue + s.tolerance - 1) / s.tolerance * s.tolerance
}

// due reports whether the next intended send has come (open loop), within
// the run and the request quota.
func (s *Schedule) due(now int64) bool {
	return s.nextDue <= now && s.nextDue < s.stopAt && !s.QuotaSpent()
}

// take hands out the next intended send time and its target, and advances
// the schedule.
func (s *Schedule) take() (int64, int32) {
	due, tgt := s.nextDue, s.spec.TargetOf(s.global(s.seq))
	s.seq++
	s.nextDue = s.intendedAt(s.seq)
	return due, tgt
}

// ClosedTarget returns the target of the loop's next closed-loop request.
func (s *Schedule) ClosedTarget() int32 {
	t := s.spec.TargetOf(s.global(s.closedK))
	s.closedK++
	return t
}

// QuotaSpent reports whether the loop has started (or queued) every request
// Spec.Requests allows it.
func (s *Schedule) QuotaSpent() bool {
	return s.quota >= 0 && s.Started+int64(s.pending.len()) >= s.quota
}

// HasPending reports whether requests wait in the pending queue for a
// connection.
func (s *Schedule) HasPending() bool { return s.pending.len() > 0 }

// PopPending takes the oldest pending request (call HasPending first).
func (s *Schedule) PopPending() (due int64, tgt int32) { return s.pending.pop() }

// QueueRefused gives a closed loop, which has no schedule to queue, a
// pending queue of capacity n for the requests the server refused
// (HTTP/2's REFUSED_STREAM, GOAWAY): they wait there to be sent again.
func (s *Schedule) QueueRefused(n int) {
	s.pending = newPendingRing(n, len(s.spec.Reqs) > 1)
}

// enqueue puts a due request in the pending queue. When the queue is full
// the request that has waited longest is given up as dropped, with the wait
// it had when it was evicted: under sustained overload the latency then
// shows the queue instead of being capped by it.
func (s *Schedule) enqueue(rec *Recorder, due int64, tgt int32, now int64) {
	if s.pending.full() {
		old, otgt := s.pending.pop()
		s.Started++ // it had its turn: the quota counts it
		if rec.Owed(old) {
			rec.Dropped++
		}
		rec.Fail(otgt, ClassDropped, ErrDropped, old, now)
	}
	s.pending.push(due, tgt)
}

// abandonPending gives up every pending request at now as class, err (a
// timeout: the drain is over; or the loop broke down) and returns how many
// there were.
func (s *Schedule) abandonPending(rec *Recorder, now int64, class ErrorClass, err error) int64 {
	n := int64(s.pending.len())
	for s.pending.len() > 0 {
		due, tgt := s.pending.pop()
		rec.Fail(tgt, class, err, due, now)
	}
	return n
}
