package run

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Now returns nanoseconds since the run start (monotonic clock).
func (lc *Lifecycle) Now() int64 { return int64(time.Since(lc.R.Start)) }

// main runs the loop on the calling goroutine. It returns when the run has
// ended and drained.
func (lc *Lifecycle) main() {
	d := lc.D
	defer lc.R.loopsDone.Done()
	defer d.Teardown()
	defer lc.survive()
	if err := d.Setup(); err != nil {
		lc.R.breakDownAtSetup(err)
		d.Finish()
		return
	}
	lc.R.ready.Done()
	<-lc.R.goCh
	if lc.R.aborted.Load() { // another loop's setup failed: no run
		d.Lock()
		lc.Stopping, lc.Ended = true, true
		d.Unlock()
		d.Finish()
		return
	}
	d.Begin(lc.Now())
	for {
		now := lc.Now()
		if !lc.Stopping && (now >= lc.stopAt || lc.R.stopped.Load() || lc.R.broken.Load() || lc.spent()) {
			lc.beginStop(now)
		}
		d.Tick(now)
		if lc.Stopping {
			if lc.drained() {
				break
			}
			if now >= lc.drainEnd {
				lc.endDrain(now)
				break
			}
		}
		if !lc.warmupSeen && now >= lc.R.warmup {
			lc.warmupSeen = true
			d.AccountBegin()
		}
		if lc.Open && !lc.Stopping {
			lc.admit(now, false)
		}
		if now >= lc.nextSecond {
			lc.flushSecond(int64(time.Second))
		}
		d.Wait(now, lc.wakeAt())
		if lc.Broken != nil {
			lc.breakDown(lc.Now())
			break
		}
	}
	lc.end()
}

// Reading notes the server bytes the loop is about to parse (each read,
// each datagram), for a panic's report; no copy is made.
func (lc *Lifecycle) Reading(b []byte) {
	lc.in = b
	if f := lc.R.Spec.ReadHook; f != nil {
		f(b)
	}
}

// PanicShow bounds the server bytes a panic's report shows.
const PanicShow = 64

// survive ends a loop that panicked (a bug, most likely in a parser of the
// server's bytes) as a loop whose I/O failed: the run stops and ends with
// one line naming the loop, the panic and the bytes it was reading; every
// request the loop owed ends as other, the partial result is kept, and
// main's teardown closes the loop's sockets (its locked thread exits with
// it). Deferred at the top of main: a panic no longer takes the process
// down and leaves its cleanup to others.
func (lc *Lifecycle) survive() {
	p := recover()
	if p == nil {
		return
	}
	err := lc.panicErr(p, panicSite())
	lc.Broken = err
	// The loop's state may be broken too: ending it may panic again.
	func() {
		defer func() { _ = recover() }()
		lc.breakDown(lc.Now())
	}()
	if !lc.R.broken.Load() {
		lc.R.breakDown(err) // breakDown panicked before it could
	}
	func() {
		defer func() { _ = recover() }()
		lc.end()
	}()
}

// panicErr words a loop's panic p at site: the loop, its CPU and engine,
// and the server's bytes it was reading (hex, the first PanicShow).
func (lc *Lifecycle) panicErr(p any, site string) error {
	in := "it had read nothing from a server"
	if n := len(lc.in); n > 0 {
		shown := ""
		if n > PanicShow {
			shown = fmt.Sprintf(", the first %d", PanicShow)
		}
		in = fmt.Sprintf("the server's bytes it was reading (%d%s, hex): %x", n, shown, lc.in[:min(n, PanicShow)])
	}
	return fmt.Errorf("loop %d on CPU %d (%s) panicked: %v%s; %s: a bug in loadlab, please report it with this line",
		lc.ID, lc.CPU, lc.R.eng.Protocol(), p, site, in)
}

// panicSite is " at FILE:LINE" of the innermost frame outside the runtime
// of the panic being recovered (survive's caller's), or "".
func panicSite() string {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if f.File != "" && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf(" at %s:%d", filepath.Base(filepath.Dir(f.File))+"/"+filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// spent reports whether the request quota is used up.
func (lc *Lifecycle) spent() bool {
	lc.D.Lock()
	defer lc.D.Unlock()
	return lc.QuotaSpent()
}

// drained reports whether nothing is in flight or pending.
func (lc *Lifecycle) drained() bool {
	lc.D.Lock()
	defer lc.D.Unlock()
	return lc.D.Inflight() == 0 && lc.pending.len() == 0
}

// wakeAt returns when the loop must wake at the latest: the next intended
// send (or the pacing tick it falls in), second boundary, warmup end, stop or
// drain end, whichever is first.
func (lc *Lifecycle) wakeAt() int64 {
	next := lc.nextSecond
	if lc.Stopping {
		next = min(next, lc.drainEnd)
	} else {
		next = min(next, lc.stopAt)
		if lc.Open {
			next = min(next, lc.wakeFor())
		}
	}
	if !lc.warmupSeen {
		next = min(next, lc.R.warmup)
	}
	return next
}

// admit moves every request whose intended time has come to a free
// connection, or to the pending queue when all connections are busy. It
// first records how late this wakeup came for the earliest due request: the
// generator's own lag, whatever the server is doing. Each dispatch reads the
// clock afresh, so a long batch neither hides its own duration nor leaves
// requests that fell due meanwhile for the next wakeup.
//
// At the stop (last true) everything due goes out, tick or not: requests
// due before the stop are owed even when their tick would come after it.
func (lc *Lifecycle) admit(now int64, last bool) {
	d := lc.D
	d.Lock()
	defer d.Unlock()
	if !lc.due(now) || now < lc.wakeFor() && !last {
		// Nothing due; or, with a pacing tolerance, the tick the next
		// request falls in has not come: requests leave together at the
		// ticks, so their responses come back together and one wakeup
		// takes many (a loop that sent at every wakeup would spread them).
		return
	}
	lc.Rec.wokeLate(now, lc.nextDue)
	for lc.due(now) {
		due, tgt := lc.take()
		if lc.pending.len() == 0 {
			if c, ok := d.Idle(); ok {
				d.Send(c, due, tgt, now)
				now = lc.Now()
				continue
			}
		}
		lc.enqueue(lc.Rec, due, tgt, now)
	}
}

// beginStop ends the measured window: requests due before the stop still
// go out, later ones do not, and what is in flight or pending gets until
// the drain end (one timeout, or 1 s when interrupted).
func (lc *Lifecycle) beginStop(now int64) {
	if lc.Open {
		lc.admit(now, true)
	}
	lc.D.Lock()
	lc.Stopping = true
	lc.Rec.windowEnd = min(now, lc.stopAt)
	lc.D.Unlock()
	lc.stopWall = now
	if !lc.warmupSeen {
		lc.warmupSeen = true // interrupted during the warmup: an empty window
		lc.D.AccountBegin()
	}
	lc.D.AccountEnd()
	// The drain lasts one timeout from the scheduled stop (a loop that
	// woke late for the stop does not stretch it), or from the moment the
	// quota was reached; an interrupted run drains for 1 s at most.
	from := now
	if now >= lc.stopAt {
		from = lc.stopAt
	}
	drain := int64(lc.R.Spec.Timeout)
	if lc.R.stopped.Load() || lc.R.broken.Load() {
		from = now
		drain = min(drain, int64(time.Second)) // interrupted: finish quickly
	}
	lc.drainEnd = from + drain
}

// windowEnd is the end of this loop's measured window: the stop, or earlier
// when interrupted or the request quota was reached.
func (lc *Lifecycle) windowEnd() int64 {
	if lc.stopWall > 0 && lc.stopWall < lc.stopAt {
		return lc.stopWall
	}
	return lc.stopAt
}

// endDrain ends the drain: every request still in flight or pending is given
// up as a timeout at this moment (each has waited at least a timeout since
// its intended time, or the shortened drain of an interrupted run), so no
// owed request leaves the run without an outcome.
func (lc *Lifecycle) endDrain(now int64) {
	lc.D.Lock()
	defer lc.D.Unlock()
	lc.Ended = true
	n := int64(lc.D.GiveUp(now, ClassTimeout, ErrDrained))
	lc.R.unfinished.Add(n + lc.abandonPending(lc.Rec, now, ClassTimeout, ErrDrained))
}

// breakDown ends the loop at once after its own I/O failed (lc.Broken): the
// run stops (the other loops as if interrupted) and ends with that error;
// what was due is still taken from the schedule, and every request this
// loop owed, in flight or pending, ends now as an error of class other
// whose sample is the failure.
func (lc *Lifecycle) breakDown(now int64) {
	lc.R.breakDown(lc.Broken)
	if !lc.Stopping {
		lc.beginStop(now)
	}
	lc.D.Lock()
	defer lc.D.Unlock()
	lc.Ended = true
	lc.D.GiveUp(now, ClassOther, lc.Broken)
	lc.abandonPending(lc.Rec, now, ClassOther, lc.Broken)
}

// flushSecond hands this second's tallies and interval histogram to the
// aggregator and starts the next second; dur is how much of the second the
// loop covered (less than 1 s for the last one).
func (lc *Lifecycle) flushSecond(dur int64) {
	lc.D.Lock()
	rep := loopSecond{loop: lc.ID, t: lc.secIdx, counts: lc.Rec.sec, hist: lc.Rec.interval, dur: dur}
	if len(lc.R.obs) > 0 {
		rep.live = lc.liveShare()
	}
	select {
	case h := <-lc.R.histPool:
		lc.Rec.interval = h
	default:
		lc.Rec.interval = lc.R.newHist() // aggregator behind: rare, bounded by its backlog
	}
	lc.Rec.sec = secondCounts{}
	lc.D.Unlock()
	lc.R.seconds <- rep
	lc.secIdx++
	lc.nextSecond += int64(time.Second)
}

// end ends the loop: results still arriving are not counted, the
// engine's goroutines leave, and the last, partial second is reported.
func (lc *Lifecycle) end() {
	lc.D.Lock()
	lc.Ended = true
	lc.D.Unlock()
	lc.D.Finish()
	lc.flushSecond(lc.Now() - (lc.nextSecond - int64(time.Second)))
}

// The driver's seam to the schedule: what a loop asks of the lifecycle
// when it starts a request.

// Starting counts a request a driver starts, intended at intended, at
// now: the quota's count, and a late send when it leaves more than
// LateThreshold after its intended time inside the measured window.
func (lc *Lifecycle) Starting(intended, now int64) {
	lc.Started++
	lc.Rec.LateSend(intended, now)
}

// Requeue puts a started request the server refused back at the head of
// the pending queue, with its intended time, to be started again (the
// quota counts it once); false when the queue has no room.
func (lc *Lifecycle) Requeue(intended int64, tgt int32) bool {
	if lc.pending.full() {
		return false
	}
	lc.Started--
	lc.pending.pushFront(intended, tgt)
	return true
}
