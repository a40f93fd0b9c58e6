package gen

import (
	"fmt"
	"os"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
)

// aggregator merges the loops' per-second reports into the per-second
// series, the HdrHistogram interval log and the live progress. It runs on
// its own goroutine, off the loops' hot paths.
type aggregator struct {
	r       *run
	nloops  int
	open    map[int]*secondAcc
	seconds []result.PerSecond
	twPeak  int
	log     *hdr.HistogramLogWriter
	merged  *hdr.Histogram
	next    int // next second to emit
	spare   []*hdr.Histogram
	spill   *histSpill // per-second histograms on disk until the result (nil: in memory)
	spillAt string     // where they wait: the spill file's directory, or result.SpillMemory
	spilled []spillRef // where seconds[i]'s histogram is in spill (n 0: in seconds[i].Hist)
	live    *liveState // Config.Live's sums (nil: off)

	// TIME_WAIT is sampled on its own clock, at each second boundary, so a
	// loop that is late with its report (e.g. blocked in a slow connect)
	// does not shift the samples.
	twMu   sync.Mutex
	twAt   map[int]int
	twStop chan struct{}
	twDone chan struct{}
}

type secondAcc struct {
	n      int
	counts secondCounts
	hist   *hdr.Histogram
	dur    int64 // the longest any loop covered of this second
}

func newAggregator(r *run, nloops int) *aggregator {
	a := &aggregator{r: r, nloops: nloops, open: map[int]*secondAcc{}, merged: r.newHist(),
		twAt: map[int]int{}, twStop: make(chan struct{}), twDone: make(chan struct{})}
	dir := os.TempDir()
	var err error
	a.spill, err = newHistSpill(dir)
	a.spillAt = dir
	if err != nil {
		a.spillAt = result.SpillMemory
		r.notes = append(r.notes, fmt.Sprintf("per-second histograms kept in memory: no temporary file in %s (%v); set TMPDIR to a writable directory for a long run", dir, err))
	}
	if r.cfg.HdrLog != nil {
		a.log = hdr.NewHistogramLogWriter(r.cfg.HdrLog)
	}
	if r.cfg.Live != nil {
		a.live = newLiveState(r, nloops)
	}
	return a
}

// sampleTimeWait records the generator's TIME_WAIT count at the end of
// every second until stopped.
func (a *aggregator) sampleTimeWait() {
	defer close(a.twDone)
	for t := 0; ; t++ {
		next := a.r.start.Add(time.Duration(t+1) * time.Second)
		select {
		case <-time.After(time.Until(next)):
		case <-a.twStop:
			return
		}
		tw := a.timeWait()
		a.twMu.Lock()
		a.twAt[t] = tw
		if tw > a.twPeak {
			a.twPeak = tw
		}
		a.twMu.Unlock()
	}
}

// timeWait counts the generator's TIME_WAIT sockets to the target. The
// sock_diag dump walks the kernel's whole connection table (milliseconds
// each time), so it is skipped while no loop has closed a socket: then none
// of ours can be in TIME_WAIT.
func (a *aggregator) timeWait() int {
	if a.r.eng.closes() == 0 {
		return 0
	}
	return countTimeWait(a.r.diagFd, a.r.dst)
}

// collect merges the loops' per-second reports until the loops are done.
func (a *aggregator) collect() {
	go a.sampleTimeWait()
	defer func() { close(a.twStop); <-a.twDone }()
	if a.log != nil {
		a.startLog()
	}
	for rep := range a.r.reports {
		acc := a.open[rep.t]
		if acc == nil {
			acc = &secondAcc{hist: a.spareHist()}
			a.open[rep.t] = acc
		}
		acc.n++
		acc.counts.ok += rep.counts.ok
		acc.counts.non2xx += rep.counts.non2xx
		acc.counts.errors += rep.counts.errors
		acc.counts.bytes += rep.counts.bytes
		acc.dur = max(acc.dur, rep.dur)
		acc.hist.Merge(rep.hist)
		if rep.live != nil {
			a.live.add(rep.loop, rep.live)
		}
		rep.hist.Reset()
		select {
		case a.r.histPool <- rep.hist:
		default:
		}
		for {
			acc := a.open[a.next]
			if acc == nil || acc.n < a.nloops {
				break
			}
			a.emit(a.next, acc)
		}
	}
	// Loops have ended: emit what is left (partial last seconds), in order.
	for len(a.open) > 0 {
		if acc := a.open[a.next]; acc != nil {
			a.emit(a.next, acc)
		} else {
			a.next++
		}
	}
}

// spareHist returns a histogram from the aggregator's own free list.
func (a *aggregator) spareHist() *hdr.Histogram {
	if n := len(a.spare); n > 0 {
		h := a.spare[n-1]
		a.spare = a.spare[:n-1]
		return h
	}
	return a.r.newHist()
}

func (a *aggregator) emit(t int, acc *secondAcc) {
	delete(a.open, t)
	defer func() {
		acc.hist.Reset()
		a.spare = append(a.spare, acc.hist)
	}()
	a.next = t + 1
	a.twMu.Lock()
	tw, ok := a.twAt[t]
	delete(a.twAt, t)
	a.twMu.Unlock()
	if !ok {
		tw = a.timeWait() // the last, partial second
		a.twMu.Lock()
		a.twPeak = max(a.twPeak, tw)
		a.twMu.Unlock()
	}
	a.merged.Merge(acc.hist)
	ps := result.PerSecond{
		T:        t,
		DurS:     units.Round3(float64(acc.dur) / 1e9),
		OK:       acc.counts.ok,
		Non2xx:   acc.counts.non2xx,
		Errors:   acc.counts.errors,
		P99us:    acc.hist.ValueAtQuantile(99),
		Maxus:    acc.hist.Max(),
		Bytes:    acc.counts.bytes,
		TimeWait: tw,
	}
	ps.SecondMergeable = a.secondMergeable(t, acc.hist)
	ref, ok := a.spill.put(ps.Hist)
	if ok {
		ps.Hist = ""
	}
	a.seconds = append(a.seconds, ps)
	a.spilled = append(a.spilled, ref)
	if a.log != nil {
		a.logInterval(t, acc)
	}
	if p := a.r.cfg.Progress; p != nil {
		p(Second{T: t, OK: ps.OK, Non2xx: ps.Non2xx, Errors: ps.Errors, P99us: ps.P99us, P99SoFarUs: a.merged.ValueAtQuantile(99),
			Elapsed: time.Since(a.r.start).Seconds()})
	}
	if a.live != nil {
		var achieved float64
		if acc.dur > 0 {
			achieved = float64(acc.counts.ok) / (float64(acc.dur) / 1e9)
		}
		a.r.cfg.Live(a.live.live(a.r, t, time.Since(a.r.start).Seconds(), achieved))
	}
}

// The HdrHistogram interval log (.hlog), in the format HdrHistogram's
// HistogramLogProcessor and the Go library's reader read: a whole-second
// BaseTime, a StartTime with millisecond precision, and one line per second
// "start,length,max,payload" with start relative to BaseTime and max in
// milliseconds (the recorded values are microseconds: ratio 1000).
const hlogMaxRatio = 1000.0

//nolint:errcheck // best effort: a failing --hdr-log writer must not stop the run; its owner sees the error when it closes it
func (a *aggregator) startLog() {
	ms := a.r.start.UnixMilli()
	a.log.OutputLogFormatVersion()
	a.log.OutputComment("[loadlab corrected latency, microseconds, one interval per second; Interval_Max in milliseconds]")
	a.log.OutputComment(fmt.Sprintf("[StartTime: %.3f (seconds since epoch), %s]", float64(ms)/1000, a.r.start.UTC().Format(time.RFC3339Nano)))
	base := ms - ms%1000
	a.log.OutputBaseTime(base)
	a.log.SetBaseTime(base)
	a.log.OutputLegend()
}

func (a *aggregator) logInterval(t int, acc *secondAcc) {
	payload, err := acc.hist.EncodeV2()
	if err != nil {
		return
	}
	start := float64(a.r.start.Add(time.Duration(t)*time.Second).UnixMilli()-a.log.BaseTime()) / 1000
	fmt.Fprintf(a.r.cfg.HdrLog, "%.3f,%.3f,%.3f,%s\n", start, float64(acc.dur)/1e9, float64(acc.hist.Max())/hlogMaxRatio, payload)
}

// secondMergeable returns the wall-clock key and the encoded histogram of
// second t of the run.
func (a *aggregator) secondMergeable(t int, h *hdr.Histogram) result.SecondMergeable {
	s := result.SecondMergeable{AtMs: a.r.start.Add(time.Duration(t) * time.Second).UnixMilli()}
	s.Hist, _ = result.EncodeHist(h) // cannot fail on a histogram the aggregator built
	return s
}

// perSecond is the per-second series with every histogram back in memory
// (from the spill file), for the result; call it once, after run.
func (a *aggregator) perSecond() []result.PerSecond {
	if err := a.spill.restore(a.seconds, a.spilled); err != nil {
		a.r.notes = append(a.r.notes, "per-second histograms lost: reading them back from the temporary file failed: "+err.Error())
	}
	a.spill, a.spilled = nil, nil
	return a.seconds
}
