package run

import (
	"fmt"
	"math"
	"os"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
)

// The run's result, assembled once every loop has ended: the loops'
// recorders merged, the engine's Stats, the self-check's verdict, the wake
// floor, and what makes the result mergeable with its other shards'.

// wakeFloor gives res the machine's wake floor: the one measured during
// the window (Config.WakeProbe), or, when the lag rule fired in a run that
// ran to its end, one probed now, after the run and its assembly, so that
// the probe's sleeps are not part of either.
func (r *Run) wakeFloor(res *result.Result) {
	g := &res.Generator
	switch {
	case r.wake != nil:
		m := r.wake.wait()
		m.During = true
		g.WakeFloor = m.WakeFloor
		r.lag.noteWakeFloor(g, m)
	case r.lag.fired != nil && !res.Interrupted:
		r.lag.noteWakeFloor(g, probeWakeFloor(g.CPUs, WakeProbeSleeps, WakeProbeSleep))
	}
}

// result merges the loops' recorders into the Result, with what the
// engine told of itself (Engine.Stats) in st.
func (r *Run) result(agg *aggregator, st *Stats) *result.Result {
	cfg := r.Spec
	perSecond := agg.perSecond() // first: it may add a note
	total := newRecorder(r.warmup, r.histMax)
	var lagMerged = newHist()
	var sum result.Tally // the loops' counts (result.Tally.Add: the sum the Merger uses too)
	g := st.Gen
	interrupted := r.stopped.Load()
	var window float64
	recs := make([]*Recorder, len(r.Loops))
	for i, lc := range r.Loops {
		rec := lc.Rec
		recs[i] = rec
		total.corrected.Merge(rec.corrected)
		total.corrected2x.Merge(rec.corrected2x)
		total.uncorrected.Merge(rec.uncorrected)
		total.handshake.Merge(rec.handshake)
		lagMerged.Merge(rec.lag)
		sum.Add(rec.tally())
		total.okInWindow += rec.okInWindow
		total.bytesInWindow += rec.bytesInWindow
		total.lateSends += rec.lateSends
		total.Dropped += rec.Dropped
		total.Unsolicited += rec.Unsolicited
		if w := float64(lc.windowEnd()-r.warmup) / 1e9; w > window {
			window = w
		}
	}
	if window <= 0 {
		window = math.SmallestNonzeroFloat64
	}
	for _, s := range st.Shares {
		g.Busy = append(g.Busy, units.Round3(s.busy))
		g.Starved = append(g.Starved, units.Round3(s.starved()))
		g.Idle = append(g.Idle, units.Round3(s.idle()))
		g.CPUSeconds = append(g.CPUSeconds, units.Round3(s.cpuS))
	}
	g.LagP50us = lagMerged.ValueAtQuantile(50)
	g.LagP95us = lagMerged.ValueAtQuantile(95)
	g.LagP99us = lagMerged.ValueAtQuantile(99)
	g.LagP999us = lagMerged.ValueAtQuantile(99.9)
	g.LagMaxus = lagMerged.Max()
	r.lag = lagJudge{samples: lagMerged.TotalCount(), hist: lagMerged}
	g.LateSends = total.lateSends
	g.Dropped = total.Dropped
	g.Unfinished = r.unfinished.Load()
	g.Unsolicited = total.Unsolicited
	g.TimeWaitPeak = agg.twPeak
	g.Spill = agg.spillAt
	g.Notes = append(g.Notes, r.notes...)
	if r.TLS != nil {
		g.Notes = append(g.Notes, r.TLS.notes()...)
	}
	if interrupted && g.Unfinished > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("interrupted: %d requests still unanswered after the shortened drain are counted as timeouts", g.Unfinished))
	}

	res := &result.Result{
		Target:             cfg.Target.URL,
		Protocol:           r.eng.Protocol(),
		QUICVersion:        st.QUICVersion,
		Streams:            st.Streams,
		H2:                 st.H2,
		Mode:               "closed",
		Connections:        cfg.Connections,
		DurationS:          units.Round3(window),
		WarmupS:            cfg.Warmup.Seconds(),
		RequestedRate:      cfg.Rate,
		Latency:            result.LatencyOf(total.corrected),
		Latency2xx:         result.LatencyOf(total.corrected2x),
		LatencyUncorrected: result.LatencyOf(total.uncorrected),
		Seconds:            perSecond,
		Interrupted:        interrupted,
		CorrectedHist:      total.corrected,
		Corrected2xxHist:   total.corrected2x,
		UncorrectedHist:    total.uncorrected,
	}
	if cfg.Pacer != nil {
		res.Mode = "open"
	}
	res.Stages = cfg.Stages
	res.Targets = targetResults(cfg, recs)
	r.lag.perCPU, r.lag.starvedLimits = st.PerCPU, st.QUICLoops
	r.lag.verdict(&g, st.Shares, res)
	res.Generator = g
	res.AchievedRate = units.Round3(float64(total.okInWindow) / window)
	res.ThroughputGbps = units.Round3(float64(total.bytesInWindow) * 8 / window / 1e9)
	if sum.Handshakes > 0 || cfg.NewConn || r.TLS != nil {
		res.HandshakeRate = units.Round3(float64(sum.Handshakes) / window)
		hs := result.LatencyOf(total.handshake)
		res.HandshakeUs = &hs
	}
	if r.TLS != nil {
		res.TLS = r.TLS.info(sum.Resumed, sum.ZeroRTT)
	}
	sum.Set(res)
	r.mergeable(res, total, window)
	if len(r.obs) > 0 {
		r.final = finalLive(r, res, total, recs, agg.live)
	}
	return res
}

// targetResults merges the loops' per-target tallies, in file order (nil
// with one request).
func targetResults(cfg *Spec, recs []*Recorder) []result.TargetResult {
	if len(cfg.Reqs) <= 1 || len(recs) == 0 || recs[0].targets == nil {
		return nil
	}
	out := make([]result.TargetResult, len(cfg.Reqs))
	for i, rq := range cfg.Reqs {
		h := hdr.New(histMin, recs[0].targets[i].corrected.HighestTrackableValue(), targetSigFigs)
		t := result.TargetResult{Method: rq.Method, URL: rq.Target.URL}
		for _, rec := range recs {
			tt := &rec.targets[i]
			t.OK += tt.ok
			t.Non2xx += tt.non2xx
			t.Errors += tt.errors
			h.Merge(tt.corrected)
		}
		t.Requests = t.OK + t.Non2xx + t.Errors
		t.Latency = result.LatencyOf(h)
		t.Hist, _ = result.EncodeHist(h)
		if cfg.Weights != nil {
			t.Weight = cfg.Weights[i]
		}
		out[i] = t
	}
	return out
}

// mergeable fills what makes res mergeable: shard, host, schedule and the
// encoded histograms, and sets the shard's own share of the rate and the
// connections (res carries the whole run's from the Config).
func (r *Run) mergeable(res *result.Result, total *Recorder, window float64) {
	cfg := r.Spec
	n := cfg.Shards
	if n > 1 {
		res.Shard = &result.ShardInfo{Index: cfg.Shard, Count: n}
	}
	res.Host = cfg.Machine
	if res.Host == "" {
		res.Host, _ = os.Hostname()
	}
	res.Schedule = &result.ScheduleInfo{
		Start: r.Start.UTC(), Rate: cfg.Rate, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(),
		Requests: cfg.Requests, Connections: cfg.Connections, Shards: n,
	}
	if p := cfg.Pacer; p != nil {
		// The mean offered rate over the measured window: a constant
		// rate's own (exact), or the stages' mean there.
		res.RequestedRate = cfg.ShardRate()
		if from, to := cfg.Warmup.Seconds(), cfg.Warmup.Seconds()+window; to > from {
			mean, exact := p.mean(from, to)
			if res.RequestedRate = mean / float64(n); !exact {
				res.RequestedRate = units.Round3(res.RequestedRate)
			}
		}
	}
	res.Connections = cfg.ShardConns()
	enc := &result.EncodedHistograms{}
	var err error
	for _, e := range []struct {
		h   *hdr.Histogram
		dst *string
	}{{total.corrected, &enc.Corrected}, {total.corrected2x, &enc.OK}, {total.uncorrected, &enc.Uncorrected}, {total.handshake, &enc.Handshake}} {
		if e.h == nil || e.h.TotalCount() == 0 && e.dst == &enc.Handshake {
			continue
		}
		if *e.dst, err = result.EncodeHist(e.h); err != nil {
			// The library only fails on a histogram it cannot represent:
			// say so rather than write a result that cannot merge.
			res.Generator.Notes = append(res.Generator.Notes, "histograms not written: "+err.Error())
			return
		}
	}
	res.Histograms = enc
}
