package gen

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// aggregator merges the loops' per-second reports into the per-second
// series, the HdrHistogram interval log and the live progress. It runs on
// its own goroutine, off the loops' hot paths.
type aggregator struct {
	r       *run
	nloops  int
	open    map[int]*secondAcc
	seconds []PerSecond
	twPeak  int
	log     *hdr.HistogramLogWriter
	merged  *hdr.Histogram
	next    int // next second to emit
}

type secondAcc struct {
	n      int
	counts secondCounts
	hist   *hdr.Histogram
}

func newAggregator(r *run, nloops int) *aggregator {
	a := &aggregator{r: r, nloops: nloops, open: map[int]*secondAcc{}, merged: newHist()}
	if r.cfg.HdrLog != nil {
		a.log = hdr.NewHistogramLogWriter(r.cfg.HdrLog)
	}
	return a
}

func (a *aggregator) run() {
	if a.log != nil {
		a.log.OutputLogFormatVersion()
		a.log.OutputComment("[loadlab corrected latency, microseconds, one interval per second]")
		ms := a.r.start.UnixMilli()
		a.log.OutputStartTime(ms)
		a.log.OutputBaseTime(ms)
		a.log.SetBaseTime(ms)
		a.log.OutputLegend()
	}
	for rep := range a.r.reports {
		acc := a.open[rep.t]
		if acc == nil {
			acc = &secondAcc{hist: newHist()}
			a.open[rep.t] = acc
		}
		acc.n++
		acc.counts.ok += rep.counts.ok
		acc.counts.non2xx += rep.counts.non2xx
		acc.counts.errors += rep.counts.errors
		acc.counts.bytes += rep.counts.bytes
		acc.hist.Merge(rep.hist)
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

func (a *aggregator) emit(t int, acc *secondAcc) {
	delete(a.open, t)
	a.next = t + 1
	tw := countTimeWait(a.r.diagFd, a.r.dst)
	if tw > a.twPeak {
		a.twPeak = tw
	}
	a.merged.Merge(acc.hist)
	ps := PerSecond{
		T:        t,
		OK:       acc.counts.ok,
		Non2xx:   acc.counts.non2xx,
		Errors:   acc.counts.errors,
		P99us:    acc.hist.ValueAtQuantile(99),
		Bytes:    acc.counts.bytes,
		TimeWait: tw,
	}
	a.seconds = append(a.seconds, ps)
	if a.log != nil {
		start := a.r.start.Add(time.Duration(t) * time.Second)
		acc.hist.SetStartTimeMs(start.UnixMilli())
		acc.hist.SetEndTimeMs(start.Add(time.Second).UnixMilli())
		a.log.OutputIntervalHistogram(acc.hist)
	}
	if p := a.r.cfg.Progress; p != nil {
		p(Second{T: t, OK: ps.OK, Non2xx: ps.Non2xx, Errors: ps.Errors, P99us: ps.P99us, P99SoFarUs: a.merged.ValueAtQuantile(99),
			Elapsed: time.Since(a.r.start).Seconds()})
	}
}
