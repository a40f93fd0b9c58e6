package run

import (
	"math"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/gen/result"
)

// LateThreshold: a request sent more than this after its intended time is
// a late send (any cause: the generator's lag or a busy connection).
const LateThreshold = int64(time.Millisecond)

// liveHists are one loop's latencies of the measured window since its
// last report (the run has observers), swapped out once a second.
type liveHists struct {
	corrected, uncorrected *hdr.Histogram
}

// Histogram range: 1 µs up to a run's ceiling, at 3 significant figures,
// in microseconds.
const (
	histMin     = 1
	histSigFigs = 3
	// histFloor is the least ceiling: 60 s.
	histFloor = 60_000_000
)

// histCeiling is the largest latency a run can record, in µs: the longest
// any owed request can wait is the run's duration (intended at the start,
// still pending at the stop) plus the drain (one timeout) plus its own
// timeout, so duration + 2 x timeout, and never less than 60 s.
func histCeiling(s *Spec) int64 {
	return max(histFloor, int64(s.Duration+2*s.Timeout)/int64(time.Microsecond))
}

func newHistMax(ceiling int64) *hdr.Histogram { return hdr.New(histMin, ceiling, histSigFigs) }

// newHist returns a histogram with the least ceiling (60 s), for values that
// are not request latencies (send lag, handshakes) and for tests.
func newHist() *hdr.Histogram { return newHistMax(histFloor) }

// record adds v (µs) to h, clamped into the histogram's range, so that a
// value beyond the ceiling is kept as the ceiling rather than dropped.
func record(h *hdr.Histogram, v int64) {
	if v < histMin {
		v = histMin
	} else if top := h.HighestTrackableValue(); v > top {
		v = top
	}
	h.RecordValue(v) //nolint:errcheck // in range by construction: cannot fail
}

// counters are the per-request tallies of one loop. Only the loop's own
// thread writes them; they are read after the loop has stopped, or copied
// into a loopSecond by the loop itself. The engines count the exported
// ones themselves.
type counters struct {
	status      [1000]uint64 // by status code (100-999), measured window
	Errors      [numErrorClasses]uint64
	FirstErr    [numErrorClasses]error // first error seen per class (any time)
	OK          uint64
	non2xx      uint64
	bytes       uint64 // header + body bytes read, measured window
	lateSends   uint64
	Dropped     uint64 // also in Errors[ClassDropped]
	Retries     uint64 // requests resent once on a new connection (kept-alive connection closed before any response byte)
	handshakes  uint64 // completed TCP+TLS handshakes, measured window
	resumed     uint64
	ZeroRTT     uint64 // HTTP/3: requests sent as 0-RTT early data the server accepted
	Unsolicited uint64 // connections dropped because the server sent bytes no request asked for
	Written     uint64 // request bytes written (the whole run; read with observers only)
	Dials       uint64 // connections opened (the whole run)
}

// Recorder holds one loop's histograms and counters. No locks: the loop
// thread owns it (HTTP/3: its loop's mutex guards it).
//
// Coordinated omission: every latency that measures the server is taken
// from the request's intended time (the schedule's slot, or in closed loop
// the moment its connection became free), not from the moment the
// generator got round to writing it. A request that waited in the pending
// queue because every connection was busy, or behind a slow response,
// carries that wait in its latency, as a real client of a slow server
// would. The intended time travels with the request: the schedule hands
// it out (schedule.take), the connection keeps it while the request is in
// flight (each engine's connection keeps it), and the recorder subtracts
// it here. The uncorrected histogram, from the actual write, is kept to show
// the difference.
type Recorder struct {
	counters
	corrected   *hdr.Histogram // every owed outcome, from its intended time, measured window
	corrected2x *hdr.Histogram // 2xx responses only, from their intended time, measured window
	uncorrected *hdr.Histogram // responses, from the actual write, measured window
	lag         *hdr.Histogram // open loop: how late the loop woke for its earliest due request, measured window
	handshake   *hdr.Histogram // connect start to handshake done
	interval    *hdr.Histogram // corrected, every outcome completed this second, warmup included

	// live holds the measured window's latencies since the last second's
	// report, for the run's observers (nil histograms: none).
	live liveHists

	sec secondCounts

	// targets tallies each target's owed outcomes (Config.Targets; nil
	// with one request).
	targets []targetTally

	// warmup and windowEnd bound the measured window (windowEnd is
	// MaxInt64 until the loop stops); okInWindow and bytesInWindow count
	// responses completed inside it, whatever their intended time, for
	// the rates.
	warmup        int64
	windowEnd     int64
	okInWindow    uint64
	bytesInWindow uint64
}

// targetTally is one target's share of a loop's owed outcomes. Its
// histogram has 2 significant figures (1% resolution, 21 KB instead of
// 147 KB at 3: there is one per target and loop); the run's own keep 3.
type targetTally struct {
	ok, non2xx, errors uint64
	corrected          *hdr.Histogram
}

// targetSigFigs is the precision of the per-target latency histograms.
const targetSigFigs = 2

// withTargets gives r a tally per target, for n > 1 targets.
func (r *Recorder) withTargets(n int, ceiling int64) {
	if n <= 1 {
		return
	}
	r.targets = make([]targetTally, n)
	for i := range r.targets {
		r.targets[i].corrected = hdr.New(histMin, ceiling, targetSigFigs)
	}
}

// secondCounts are the tallies of the current second.
type secondCounts struct {
	ok, non2xx, errors uint64
	bytes              uint64
	lagMax             int64 // open loop: the latest wakeup for a due request, µs (observers)
}

// newRecorder returns a recorder for a run whose measured window starts at
// warmup (ns since the start) and whose latencies reach up to ceiling µs.
func newRecorder(warmup, ceiling int64) *Recorder {
	return &Recorder{
		corrected:   newHistMax(ceiling),
		corrected2x: newHistMax(ceiling),
		uncorrected: newHistMax(ceiling),
		lag:         newHist(),
		handshake:   newHist(),
		interval:    newHistMax(ceiling),
		warmup:      warmup,
		windowEnd:   math.MaxInt64,
	}
}

// Owed reports whether a request intended at t belongs to the measured
// window (the window's end is enforced by the schedule, which hands out no
// request intended after the stop).
func (r *Recorder) Owed(intended int64) bool { return intended >= r.warmup }

// LateSend counts a late send: a request intended at intended that left
// at now, more than LateThreshold after, inside the measured window.
func (r *Recorder) LateSend(intended, now int64) {
	if now-intended > LateThreshold && r.Owed(intended) {
		r.lateSends++
	}
}

// CountHandshake counts a finished connection setup (connect and TLS
// handshake) that took took ns, for a request intended at intended; took
// -1 is a setup that is not a handshake (a plain keep-alive connection).
func (r *Recorder) CountHandshake(intended, took int64, resumed bool) {
	if took < 0 || !r.Owed(intended) {
		return
	}
	r.handshakes++
	record(r.handshake, took/1000)
	if resumed {
		r.resumed++
	}
}

// Response records a complete response to a request for target tgt.
// intended, written and done are nanoseconds since the run start.
func (r *Recorder) Response(tgt int32, status int, intended, written, done int64, nbytes int64) {
	corr := (done - intended) / 1000
	record(r.interval, corr)
	ok := status >= 200 && status < 300
	if ok {
		r.sec.ok++
	} else {
		r.sec.non2xx++
	}
	r.sec.bytes += uint64(nbytes)
	if done >= r.warmup && done <= r.windowEnd {
		// Rates count what completed inside the window, whatever its
		// intended time: under overload most of what completes in the
		// window was intended earlier, and responses that straggle in
		// while the run drains do not inflate the rate.
		if ok {
			r.okInWindow++
		}
		r.bytesInWindow += uint64(nbytes)
	}
	if !r.Owed(intended) {
		return
	}
	record(r.corrected, corr)
	if ok {
		record(r.corrected2x, corr)
	}
	record(r.uncorrected, (done-written)/1000)
	if r.live.corrected != nil {
		record(r.live.corrected, corr)
		record(r.live.uncorrected, (done-written)/1000)
	}
	if r.targets != nil {
		t := &r.targets[tgt]
		record(t.corrected, corr)
		if ok {
			t.ok++
		} else {
			t.non2xx++
		}
	}
	if status >= 0 && status < len(r.status) {
		r.status[status]++
	}
	if ok {
		r.OK++
	} else {
		r.non2xx++
	}
	r.bytes += uint64(nbytes)
}

// Fail records a request for target tgt of class c given up at done. Its corrected
// latency is the time it had waited when it was given up: a lower bound of
// what a client would have seen (vegeta and k6 record failures the same
// way), so a server that stops answering shows in the percentiles instead
// of vanishing from them.
func (r *Recorder) Fail(tgt int32, c ErrorClass, err error, intended, done int64) {
	if r.FirstErr[c] == nil {
		r.FirstErr[c] = err
	}
	corr := (done - intended) / 1000
	record(r.interval, corr)
	r.sec.errors++
	if r.Owed(intended) {
		r.Errors[c]++
		record(r.corrected, corr)
		if r.live.corrected != nil {
			record(r.live.corrected, corr)
		}
		if r.targets != nil {
			record(r.targets[tgt].corrected, corr)
			r.targets[tgt].errors++
		}
	}
}

// wokeLate records how late the loop woke for the earliest due request
// (open loop; one sample per wakeup that found requests due).
func (r *Recorder) wokeLate(now, due int64) {
	if r.Owed(due) {
		lag := (now - due) / 1000
		record(r.lag, lag)
		r.sec.lagMax = max(r.sec.lagMax, lag)
	}
}

// tally is what of the loop's counts adds up into the result
// (result.Tally): the owed requests by outcome, bytes, retries and
// handshakes, with every error class (a class of 0 too) and the first
// message of each.
func (r *Recorder) tally() result.Tally {
	t := result.Tally{
		OK: r.OK, Retries: r.Retries, BytesRead: r.bytes, Handshakes: r.handshakes, Resumed: r.resumed, ZeroRTT: r.ZeroRTT,
		Status: map[string]uint64{}, Errors: make(map[string]uint64, numErrorClasses),
	}
	for code, v := range r.status {
		if v > 0 {
			t.Status[strconv.Itoa(code)] = v
		}
	}
	var nerr uint64
	for i, v := range r.Errors {
		name := ErrorClass(i).String()
		t.Errors[name] = v
		nerr += v
		if r.FirstErr[i] != nil {
			if t.Samples == nil {
				t.Samples = map[string]string{}
			}
			t.Samples[name] = r.FirstErr[i].Error()
		}
	}
	t.Requests = r.OK + r.non2xx + nerr
	return t
}
