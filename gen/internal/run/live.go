package run

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/gen/result"
)

// liveShare takes the loop's share of the observers' Live and starts the
// next second's histograms. Under the driver's lock.
func (lc *Lifecycle) liveShare() *loopLive {
	rec := lc.Rec
	rep := &loopLive{hists: rec.live, tally: rec.tally(), written: rec.Written, dials: rec.Dials,
		inflight: lc.D.Inflight(), pending: lc.pending.len(), lagMax: rec.sec.lagMax}
	if oc, ok := lc.D.(OpenCounter); ok {
		rep.open = oc.OpenConns()
	}
	if ls, ok := lc.D.(LiveSharer); ok {
		if c, ok := ls.LiveShare(); ok {
			rep.cpu = &c
		}
	}
	rec.live = lc.R.spareLive()
	return rep
}

// liveState is the aggregator's sum of the loops' live reports.
type liveState struct {
	corrected, uncorrected *hdr.Histogram
	last                   []*loopLive // each loop's latest report
	free                   chan liveHists
}

func newLiveState(r *Run, nloops int) *liveState {
	return &liveState{corrected: r.newHist(), uncorrected: r.newHist(), last: make([]*loopLive, nloops), free: r.liveFree}
}

// add takes loop i's report: its histograms into the sums (and back to
// the loops' free list), the rest kept as its latest.
func (s *liveState) add(i int, rep *loopLive) {
	s.corrected.Merge(rep.hists.corrected)
	s.uncorrected.Merge(rep.hists.uncorrected)
	rep.hists.corrected.Reset()
	rep.hists.uncorrected.Reset()
	select {
	case s.free <- rep.hists:
	default:
	}
	rep.hists = liveHists{}
	s.last[i] = rep
}

// live builds second t's Live from the loops' latest reports.
func (s *liveState) live(r *Run, t int, elapsed float64, achieved float64) *result.Live {
	lv := &result.Live{T: t, Start: r.Start, Elapsed: elapsed, Achieved: achieved, Corrected: s.corrected, Uncorrected: s.uncorrected}
	var sum result.Tally
	for _, rep := range s.last {
		if rep == nil {
			continue
		}
		sum.Add(rep.tally)
		lv.BytesWritten += rep.written
		lv.Dials += rep.dials
		lv.Open += rep.open
		lv.InFlight += rep.inflight
		lv.Pending += rep.pending
		lv.LagMaxUs = max(lv.LagMaxUs, rep.lagMax)
		if rep.cpu != nil {
			lv.CPUs = append(lv.CPUs, *rep.cpu)
		}
	}
	lv.Tally = sum
	return lv
}

// spareLive returns a pair of empty live histograms for a loop's next
// second.
func (r *Run) spareLive() liveHists {
	select {
	case h := <-r.liveFree:
		return h
	default:
		return liveHists{corrected: r.newHist(), uncorrected: r.newHist()}
	}
}

// finalLive is the run's last Live: the result's own tallies, histograms
// and CPU account, so that a live exporter ends on the result's numbers.
func finalLive(r *Run, res *result.Result, total *Recorder, recs []*Recorder, sums *liveState) *result.Live {
	lv := &result.Live{Final: true, Start: r.Start, Tally: result.TallyOf(res), Corrected: total.corrected, Uncorrected: total.uncorrected,
		Achieved: res.AchievedRate}
	if n := len(res.Seconds); n > 0 {
		lv.T = res.Seconds[n-1].T
	}
	lv.Elapsed = res.WarmupS + res.DurationS
	for _, rec := range recs {
		lv.BytesWritten += rec.Written
		lv.Dials += rec.Dials
	}
	g := res.Generator
	for i := range g.Busy {
		c := result.LiveCPU{Busy: g.Busy[i]}
		if i < len(g.CPUs) {
			c.CPU = g.CPUs[i]
		}
		if i < len(g.Starved) {
			c.Starved = g.Starved[i]
		}
		if i < len(g.Idle) {
			c.Idle = g.Idle[i]
		}
		lv.CPUs = append(lv.CPUs, c)
	}
	if sums != nil {
		for _, rep := range sums.last {
			if rep != nil {
				lv.LagMaxUs = max(lv.LagMaxUs, rep.lagMax)
			}
		}
	}
	return lv
}
