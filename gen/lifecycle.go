package gen

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// lateThreshold: a request sent more than this after its intended time is a
// late send (any cause: the generator's lag or a busy connection).
const lateThreshold = int64(time.Millisecond)

// lifecycle is one loop's share of the run, the same for every engine: its
// schedule (intended times, pending queue, quota), its recorder, and the
// phases of the run (warmup, measured window, stop, drain, end) with the
// per-second reports. main drives it and calls the loop's driver for what
// is the protocol's.
//
// The fields from stopping on are written by the loop's own goroutine;
// stopping, ended and the schedule's pending queue and counters are also
// read and written by an engine's other goroutines, under the driver's lock.
type lifecycle struct {
	id  int
	cpu int
	r   *run
	d   driver
	rec *recorder
	schedule

	stopping   bool  // no new requests (pending ones still go out)
	ended      bool  // the drain is over: what was still owed is given up; later results are not counted
	stopWall   int64 // when the stop began (an interrupt stops early)
	drainEnd   int64
	nextSecond int64
	secIdx     int
	warmupSeen bool

	// broken is the failure of the loop's own I/O (its io_uring), set by
	// the driver on the loop's goroutine: the loop ends at once and the run
	// ends with it (breakDown).
	broken error
	// in is what the loop read from a server last (the loop's own buffer,
	// not a copy): a panic's report shows it (survive).
	in []byte
}

// now returns nanoseconds since the run start (monotonic clock).
func (lc *lifecycle) now() int64 { return int64(time.Since(lc.r.start)) }

// main runs the loop on the calling goroutine. It returns when the run has
// ended and drained.
func (lc *lifecycle) main() {
	d := lc.d
	defer lc.r.loopsDone.Done()
	defer d.teardown()
	defer lc.survive()
	if err := d.setup(); err != nil {
		lc.r.breakDownAtSetup(err)
		d.finish()
		return
	}
	lc.r.ready.Done()
	<-lc.r.go_
	if lc.r.aborted.Load() { // another loop's setup failed: no run
		d.lock()
		lc.stopping, lc.ended = true, true
		d.unlock()
		d.finish()
		return
	}
	d.begin(lc.now())
	for {
		now := lc.now()
		if !lc.stopping && (now >= lc.stopAt || lc.r.stopped.Load() || lc.r.broken.Load() || lc.spent()) {
			lc.beginStop(now)
		}
		d.tick(now)
		if lc.stopping {
			if lc.drained() {
				break
			}
			if now >= lc.drainEnd {
				lc.endDrain(now)
				break
			}
		}
		if !lc.warmupSeen && now >= lc.r.warmup {
			lc.warmupSeen = true
			d.accountBegin()
		}
		if lc.open && !lc.stopping {
			lc.admit(now, false)
		}
		if now >= lc.nextSecond {
			lc.flushSecond(int64(time.Second))
		}
		d.wait(now, lc.wakeAt())
		if lc.broken != nil {
			lc.breakDown(lc.now())
			break
		}
	}
	lc.end()
}

// reading notes the server bytes the loop is about to parse (each read,
// each datagram), for a panic's report; no copy is made.
func (lc *lifecycle) reading(b []byte) {
	lc.in = b
	if f := lc.r.cfg.readHook; f != nil {
		f(b)
	}
}

// panicShow bounds the server bytes a panic's report shows.
const panicShow = 64

// survive ends a loop that panicked (a bug, most likely in a parser of the
// server's bytes) as a loop whose I/O failed: the run stops and ends with
// one line naming the loop, the panic and the bytes it was reading; every
// request the loop owed ends as other, the partial result is kept, and
// main's teardown closes the loop's sockets (its locked thread exits with
// it). Deferred at the top of main: a panic no longer takes the process
// down and leaves its cleanup to others.
func (lc *lifecycle) survive() {
	p := recover()
	if p == nil {
		return
	}
	err := lc.panicErr(p, panicSite())
	lc.broken = err
	// The loop's state may be broken too: ending it may panic again.
	func() {
		defer func() { recover() }()
		lc.breakDown(lc.now())
	}()
	if !lc.r.broken.Load() {
		lc.r.breakDown(err) // breakDown panicked before it could
	}
	func() {
		defer func() { recover() }()
		lc.end()
	}()
}

// panicErr words a loop's panic p at site: the loop, its CPU and engine,
// and the server's bytes it was reading (hex, the first panicShow).
func (lc *lifecycle) panicErr(p any, site string) error {
	in := "it had read nothing from a server"
	if n := len(lc.in); n > 0 {
		shown := ""
		if n > panicShow {
			shown = fmt.Sprintf(", the first %d", panicShow)
		}
		in = fmt.Sprintf("the server's bytes it was reading (%d%s, hex): %x", n, shown, lc.in[:min(n, panicShow)])
	}
	return fmt.Errorf("loop %d on CPU %d (%s) panicked: %v%s; %s: a bug in loadlab, please report it with this line",
		lc.id, lc.cpu, lc.r.eng.protocol(), p, site, in)
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
func (lc *lifecycle) spent() bool {
	lc.d.lock()
	defer lc.d.unlock()
	return lc.quotaSpent()
}

// drained reports whether nothing is in flight or pending.
func (lc *lifecycle) drained() bool {
	lc.d.lock()
	defer lc.d.unlock()
	return lc.d.inflight() == 0 && lc.pending.len() == 0
}

// wakeAt returns when the loop must wake at the latest: the next intended
// send (or the pacing tick it falls in), second boundary, warmup end, stop or
// drain end, whichever is first.
func (lc *lifecycle) wakeAt() int64 {
	next := lc.nextSecond
	if lc.stopping {
		next = min(next, lc.drainEnd)
	} else {
		next = min(next, lc.stopAt)
		if lc.open {
			next = min(next, lc.wakeFor())
		}
	}
	if !lc.warmupSeen {
		next = min(next, lc.r.warmup)
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
func (lc *lifecycle) admit(now int64, last bool) {
	d := lc.d
	d.lock()
	defer d.unlock()
	if !lc.due(now) || now < lc.wakeFor() && !last {
		// Nothing due; or, with a pacing tolerance, the tick the next
		// request falls in has not come: requests leave together at the
		// ticks, so their responses come back together and one wakeup
		// takes many (a loop that sent at every wakeup would spread them).
		return
	}
	lc.rec.wokeLate(now, lc.nextDue)
	for lc.due(now) {
		due, tgt := lc.take()
		if lc.pending.len() == 0 {
			if c, ok := d.idle(); ok {
				d.send(c, due, tgt, now)
				now = lc.now()
				continue
			}
		}
		lc.enqueue(lc.rec, due, tgt, now)
	}
}

// beginStop ends the measured window: requests due before the stop still
// go out, later ones do not, and what is in flight or pending gets until
// the drain end (one timeout, or 1 s when interrupted).
func (lc *lifecycle) beginStop(now int64) {
	if lc.open {
		lc.admit(now, true)
	}
	lc.d.lock()
	lc.stopping = true
	lc.rec.windowEnd = min(now, lc.stopAt)
	lc.d.unlock()
	lc.stopWall = now
	if !lc.warmupSeen {
		lc.warmupSeen = true // interrupted during the warmup: an empty window
		lc.d.accountBegin()
	}
	lc.d.accountEnd()
	// The drain lasts one timeout from the scheduled stop (a loop that
	// woke late for the stop does not stretch it), or from the moment the
	// quota was reached; an interrupted run drains for 1 s at most.
	from := now
	if now >= lc.stopAt {
		from = lc.stopAt
	}
	drain := int64(lc.r.cfg.Timeout)
	if lc.r.stopped.Load() || lc.r.broken.Load() {
		from = now
		drain = min(drain, int64(time.Second)) // interrupted: finish quickly
	}
	lc.drainEnd = from + drain
}

// windowEnd is the end of this loop's measured window: the stop, or earlier
// when interrupted or the request quota was reached.
func (lc *lifecycle) windowEnd() int64 {
	if lc.stopWall > 0 && lc.stopWall < lc.stopAt {
		return lc.stopWall
	}
	return lc.stopAt
}

// endDrain ends the drain: every request still in flight or pending is given
// up as a timeout at this moment (each has waited at least a timeout since
// its intended time, or the shortened drain of an interrupted run), so no
// owed request leaves the run without an outcome.
func (lc *lifecycle) endDrain(now int64) {
	lc.d.lock()
	defer lc.d.unlock()
	lc.ended = true
	n := int64(lc.d.giveUp(now, ErrTimeout, errDrained))
	lc.r.unfinished.Add(n + lc.abandonPending(lc.rec, now, ErrTimeout, errDrained))
}

// breakDown ends the loop at once after its own I/O failed (lc.broken): the
// run stops (the other loops as if interrupted) and ends with that error;
// what was due is still taken from the schedule, and every request this
// loop owed, in flight or pending, ends now as an error of class other
// whose sample is the failure.
func (lc *lifecycle) breakDown(now int64) {
	lc.r.breakDown(lc.broken)
	if !lc.stopping {
		lc.beginStop(now)
	}
	lc.d.lock()
	defer lc.d.unlock()
	lc.ended = true
	lc.d.giveUp(now, ErrOther, lc.broken)
	lc.abandonPending(lc.rec, now, ErrOther, lc.broken)
}

// flushSecond hands this second's tallies and interval histogram to the
// aggregator and starts the next second; dur is how much of the second the
// loop covered (less than 1 s for the last one).
func (lc *lifecycle) flushSecond(dur int64) {
	lc.d.lock()
	rep := secondReport{loop: lc.id, t: lc.secIdx, counts: lc.rec.sec, hist: lc.rec.interval, dur: dur}
	if lc.r.cfg.Live != nil {
		rep.live = lc.liveReport()
	}
	select {
	case h := <-lc.r.histPool:
		lc.rec.interval = h
	default:
		lc.rec.interval = lc.r.newHist() // aggregator behind: rare, bounded by its backlog
	}
	lc.rec.sec = secondCounts{}
	lc.d.unlock()
	lc.r.reports <- rep
	lc.secIdx++
	lc.nextSecond += int64(time.Second)
}

// end ends the loop: results still arriving are not counted, the
// engine's goroutines leave, and the last, partial second is reported.
func (lc *lifecycle) end() {
	lc.d.lock()
	lc.ended = true
	lc.d.unlock()
	lc.d.finish()
	lc.flushSecond(lc.now() - (lc.nextSecond - int64(time.Second)))
}

// popLast removes and returns the last element of *s (a free list).
func popLast[T any](s *[]T) (T, bool) {
	n := len(*s)
	if n == 0 {
		var zero T
		return zero, false
	}
	v := (*s)[n-1]
	*s = (*s)[:n-1]
	return v, true
}

// The driver's seam to the schedule: what a loop asks of the lifecycle
// when it starts a request.

// starting counts a request a driver starts, intended at intended, at
// now: the quota's count, and a late send when it leaves more than
// lateThreshold after its intended time inside the measured window.
func (lc *lifecycle) starting(intended, now int64) {
	lc.started++
	if now-intended > lateThreshold && lc.rec.owed(intended) {
		lc.rec.lateSends++
	}
}

// hasPending reports whether requests wait in the pending queue for a
// connection.
func (lc *lifecycle) hasPending() bool { return lc.pending.len() > 0 }

// popPending takes the oldest pending request (call hasPending first).
func (lc *lifecycle) popPending() (due int64, tgt int32) { return lc.pending.pop() }

// requeue puts a started request the server refused back at the head of
// the pending queue, with its intended time, to be started again (the
// quota counts it once); false when the queue has no room.
func (lc *lifecycle) requeue(intended int64, tgt int32) bool {
	if lc.pending.full() {
		return false
	}
	lc.started--
	lc.pending.pushFront(intended, tgt)
	return true
}
