package gen

import (
	"fmt"
	"math"
	"os"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
)

// outcome is what result assembles: each loop's recorder and the end of its
// measured window, and the engine's account of its CPUs, which the engines
// measure differently.
type outcome struct {
	recs        []*recorder
	ends        []int64    // per loop: end of the measured window, ns since start
	shares      []cpuShare // per loop (HTTP/1.1) or per CPU (HTTP/3)
	g           result.Generator
	protocol    string // "http/1.1", "h2" or "h3"
	quicVersion string
	perCPU      bool           // shares are per CPU, not per loop (quic-go's HTTP/3 engine)
	quicLoops   bool           // the loops are lean QUIC loops (their starvation alone limits the run)
	streams     int            // h2: streams per connection
	h2          *result.H2Info // h2: what the loops saw of the protocol
}

// wakeFloor gives res the machine's wake floor: the one measured during
// the window (Config.WakeProbe), or, when the lag rule fired in a run that
// ran to its end, one probed now, after the run and its assembly, so that
// the probe's sleeps are not part of either.
func (r *run) wakeFloor(res *result.Result) {
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

// result merges the loops' recorders into the Result.
func (r *run) result(agg *aggregator, o outcome) *result.Result {
	cfg := r.cfg
	perSecond := agg.perSecond() // first: it may add a note
	total := newRecorder(r.warmup, r.histMax)
	var lagMerged = newHist()
	var sum result.Tally // the loops' counts (result.Tally.Add: the sum the Merger uses too)
	g := o.g
	interrupted := r.stopped.Load()
	var window float64
	for i, rec := range o.recs {
		total.corrected.Merge(rec.corrected)
		total.corrected2x.Merge(rec.corrected2x)
		total.uncorrected.Merge(rec.uncorrected)
		total.handshake.Merge(rec.handshake)
		lagMerged.Merge(rec.lag)
		sum.Add(rec.tally())
		total.okInWindow += rec.okInWindow
		total.bytesInWindow += rec.bytesInWindow
		total.lateSends += rec.lateSends
		total.dropped += rec.dropped
		total.unsolicited += rec.unsolicited
		if w := float64(o.ends[i]-r.warmup) / 1e9; w > window {
			window = w
		}
	}
	if window <= 0 {
		window = math.SmallestNonzeroFloat64
	}
	for _, s := range o.shares {
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
	g.Dropped = total.dropped
	g.Unfinished = r.unfinished.Load()
	g.Unsolicited = total.unsolicited
	g.TimeWaitPeak = agg.twPeak
	g.Spill = agg.spillAt
	g.Notes = append(g.Notes, r.notes...)
	if r.tls != nil {
		g.Notes = append(g.Notes, r.tls.notes()...)
	}
	if interrupted && g.Unfinished > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("interrupted: %d requests still unanswered after the shortened drain are counted as timeouts", g.Unfinished))
	}

	res := &result.Result{
		Target:             cfg.reqs[0].url,
		Protocol:           o.protocol,
		QUICVersion:        o.quicVersion,
		Streams:            o.streams,
		H2:                 o.h2,
		Mode:               "closed",
		Connections:        cfg.Connections,
		DurationS:          units.Round3(window),
		WarmupS:            cfg.Warmup.Seconds(),
		RequestedRate:      cfg.Rate,
		Latency:            result.LatencyOf(total.corrected),
		Latency2xx:         result.LatencyOf(total.corrected2x),
		LatencyUncorrected: result.LatencyOf(total.uncorrected),
		PerSecond:          perSecond,
		Interrupted:        interrupted,
		CorrectedHist:      total.corrected,
		Corrected2xxHist:   total.corrected2x,
		UncorrectedHist:    total.uncorrected,
	}
	if cfg.openLoop() {
		res.Mode = "open"
	}
	res.Stages = stagesInfo(cfg.Stages)
	res.Targets = targetResults(cfg, o.recs)
	r.lag.perCPU, r.lag.starvedLimits = o.perCPU, o.quicLoops
	r.lag.verdict(&g, o.shares, res)
	res.Generator = g
	res.AchievedRate = units.Round3(float64(total.okInWindow) / window)
	res.ThroughputGbps = units.Round3(float64(total.bytesInWindow) * 8 / window / 1e9)
	if sum.Handshakes > 0 || cfg.NewConn || r.tls != nil {
		res.HandshakeRate = units.Round3(float64(sum.Handshakes) / window)
		hs := result.LatencyOf(total.handshake)
		res.HandshakeUs = &hs
	}
	if r.tls != nil {
		res.TLS = r.tls.info(sum.Resumed, sum.ZeroRTT)
	}
	sum.Set(res)
	r.mergeable(res, total)
	if cfg.Live != nil {
		r.final = finalLive(res, total, o.recs, agg)
	}
	return res
}

// targetResults merges the loops' per-target tallies, in file order (nil
// with one request).
func targetResults(cfg *Prepared, recs []*recorder) []result.TargetResult {
	if len(cfg.reqs) <= 1 || len(recs) == 0 || recs[0].targets == nil {
		return nil
	}
	out := make([]result.TargetResult, len(cfg.reqs))
	for i, rq := range cfg.reqs {
		h := hdr.New(histMin, recs[0].targets[i].corrected.HighestTrackableValue(), targetSigFigs)
		t := result.TargetResult{Method: rq.method, URL: rq.url}
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
		if cfg.pick != nil {
			t.Weight = cfg.TargetWeights[i]
		}
		out[i] = t
	}
	return out
}

// mergeable fills what makes res mergeable: shard, host, schedule and the
// encoded histograms, and sets the shard's own share of the rate and the
// connections (res carries the whole run's from the Config).
func (r *run) mergeable(res *result.Result, total *recorder) {
	cfg := r.cfg
	n := cfg.Shard.count()
	if n > 1 {
		res.Shard = &result.ShardInfo{Index: cfg.Shard.Index, Count: n}
	}
	res.Host = cfg.Host
	if res.Host == "" {
		res.Host, _ = os.Hostname()
	}
	res.Schedule = &result.ScheduleInfo{
		Start: r.start.UTC(), Rate: cfg.Rate, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(),
		Requests: cfg.Requests, Connections: cfg.Connections, Shards: n,
	}
	res.RequestedRate = cfg.shardRate()
	if cfg.rampFn != nil {
		// Staged: the mean offered rate over the measured window.
		from, to := cfg.Warmup.Seconds(), cfg.Warmup.Seconds()+res.DurationS
		if to > from {
			res.RequestedRate = units.Round3((cfg.offeredBy(to) - cfg.offeredBy(from)) / (to - from) / float64(n))
		}
	}
	if cfg.openLoop() {
		for i := range res.PerSecond {
			t := float64(res.PerSecond[i].T)
			v := units.Round3((cfg.offeredBy(t+1) - cfg.offeredBy(t)) / float64(n))
			res.PerSecond[i].Offered = &v
		}
	}
	res.Connections = cfg.shardConnections()
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
