package result

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/internal/units"
)

// MaxStartSkew is how far apart the schedule starts of two shards may be
// for a Merger to treat them as one run. Shards given one absolute start time
// have identical starts; shards given "+5s" each start 5 s after their own
// launch, which a script launches within milliseconds of each other (tens
// or hundreds of milliseconds on a loaded machine or over ssh). Below half
// a second the per-second series still align unambiguously.
const MaxStartSkew = 400 * time.Millisecond

// Merger adds up the results of the shards of one run into the result of
// the whole run, exactly: histograms are added bucket by bucket (a
// percentile of percentiles would be wrong), counts and error classes are
// summed, per-second series are aligned by wall clock. Add each shard's
// result, then call Result. Like vegeta's Metrics.Add, it is usable
// without the CLI. Not safe for concurrent use.
type Merger struct {
	// Partial allows a merge that lacks some shards of the run; the merged
	// result then says which are missing (generator.notes) and its rates
	// are those of the shards present.
	Partial bool

	parts []*part
}

// part is one added result with its histograms decoded.
type part struct {
	name   string
	res    *Result
	count  int   // shard count of its run
	covers []int // shard indexes it holds (one, or several for a merged result)
	start  time.Time
	log    bool // read from an HdrHistogram log (latency only)

	corrected, ok, uncorrected, handshake *hdr.Histogram
}

// Add checks that r belongs to the same run as the results added before
// and adds it. name (a file name) is used in errors and in the merged
// result's shard list. Errors are one-line *UsageErrors.
func (m *Merger) Add(name string, r *Result) error {
	p, err := newPart(name, r)
	if err != nil {
		return err
	}
	for _, q := range m.parts {
		if err := compatible(q, p); err != nil {
			return err
		}
	}
	m.parts = append(m.parts, p)
	return nil
}

func newPart(name string, r *Result) (*part, error) {
	p := &part{name: name, res: r}
	var err error
	if h := r.Histograms; h != nil {
		dec := func(what, s string) *hdr.Histogram {
			if err != nil {
				return nil
			}
			var got *hdr.Histogram
			if got, err = DecodeHist(s); err != nil {
				err = usage("%s: %s histogram: %v", name, what, err)
			}
			return got
		}
		p.corrected = dec("corrected", h.Corrected)
		p.ok = dec("2xx", h.OK)
		p.uncorrected = dec("uncorrected", h.Uncorrected)
		p.handshake = dec("handshake", h.Handshake)
		if err != nil {
			return nil, err
		}
	} else {
		p.corrected, p.ok, p.uncorrected = r.CorrectedHist, r.Corrected2xxHist, r.UncorrectedHist
	}
	if p.corrected == nil {
		return nil, usage("%s carries no latency histograms: it was written by a loadlab without mergeable results, or is not a gen result; rerun it", name)
	}
	if n := int64(r.Requests); p.corrected.TotalCount() > n && r.Target != "" {
		return nil, usage("%s: its corrected histogram holds %d values but it counts %d requests: the file is damaged", name, p.corrected.TotalCount(), n)
	}
	p.start = r.hlogStart
	if p.log = !r.hlogStart.IsZero(); p.log {
		return p, nil // a log says nothing of shards or schedules
	}
	switch {
	case len(r.Shards) > 0: // a merged result: it holds the shards it lists
		p.count = r.Shards[0].Shard.Count
		for _, s := range r.Shards {
			p.covers = append(p.covers, s.Shard.Index)
		}
	default:
		sh := r.Shard.orWhole()
		p.count, p.covers = sh.Count, []int{sh.Index}
	}
	if p.count < 1 {
		return nil, usage("%s: shard count %d: the file is damaged", name, p.count)
	}
	for _, i := range p.covers {
		if i < 0 || i >= p.count {
			return nil, usage("%s: shard %d/%d is outside its run: the file is damaged", name, i, p.count)
		}
	}
	if s := r.Schedule; s != nil {
		p.start = s.Start
		if s.Shards != p.count {
			return nil, usage("%s: shard count %d but its schedule says %d shards: the file is damaged", name, p.count, s.Shards)
		}
	}
	return p, nil
}

// compatible explains, in one line, why p is not a shard of q's run.
func compatible(q, p *part) error {
	a, b := q.res, p.res
	if q.log != p.log {
		return usage("%s and %s: an HdrHistogram log merges only with other logs (a JSON result carries its histograms)", q.name, p.name)
	}
	if p.log {
		return nil
	}
	differ := func(what, av, bv string) error {
		return usage("%s and %s are not shards of one run: %s %s vs %s", q.name, p.name, what, av, bv)
	}
	if a.Target != b.Target {
		return differ("target", orNone(a.Target), orNone(b.Target))
	}
	if a.Protocol != b.Protocol {
		return differ("protocol", orNone(a.Protocol), orNone(b.Protocol))
	}
	if a.Mode != b.Mode {
		return differ("mode", orNone(a.Mode)+" loop", orNone(b.Mode)+" loop")
	}
	if a.Streams != b.Streams {
		return differ("streams per connection", strconv.Itoa(a.Streams), strconv.Itoa(b.Streams))
	}
	if q.count != p.count {
		return differ("shard count", strconv.Itoa(q.count), strconv.Itoa(p.count))
	}
	for _, i := range p.covers {
		if slices.Contains(q.covers, i) {
			return usage("%s and %s both hold shard %d/%d: give each shard's result once", q.name, p.name, i, p.count)
		}
	}
	sa, sb := a.Schedule, b.Schedule
	if (sa == nil) != (sb == nil) {
		return usage("%s and %s are not shards of one run: only %s records its schedule", q.name, p.name, map[bool]string{true: q.name, false: p.name}[sa != nil])
	}
	if sa == nil {
		// Results without a schedule (HdrHistogram logs): nothing more
		// to compare.
		return nil
	}
	if sa.Rate != sb.Rate {
		return differ("schedule rate", fmtFloat(sa.Rate)+"/s", fmtFloat(sb.Rate)+"/s")
	}
	if sa.DurationS != sb.DurationS {
		return differ("schedule duration", fmtSeconds(sa.DurationS), fmtSeconds(sb.DurationS))
	}
	if !slices.Equal(a.Stages, b.Stages) {
		return differ("stages", fmtStages(a.Stages), fmtStages(b.Stages))
	}
	if !sameTargets(a.Targets, b.Targets) {
		return usage("%s and %s are not shards of one run: their targets differ", q.name, p.name)
	}
	if sa.WarmupS != sb.WarmupS {
		return differ("warmup", fmtSeconds(sa.WarmupS), fmtSeconds(sb.WarmupS))
	}
	if sa.Requests != sb.Requests {
		return differ("requests limit", strconv.Itoa(sa.Requests), strconv.Itoa(sb.Requests))
	}
	if sa.Connections != sb.Connections {
		return differ("connections of the whole run", strconv.Itoa(sa.Connections), strconv.Itoa(sb.Connections))
	}
	if d := sb.Start.Sub(sa.Start); d > MaxStartSkew || d < -MaxStartSkew {
		return usage("%s and %s are not shards of one run: their schedules started %v apart (more than %v); give every shard the same absolute start time",
			q.name, p.name, d.Abs().Round(time.Millisecond), MaxStartSkew)
	}
	return nil
}

func sameTargets(a, b []TargetResult) bool {
	return slices.EqualFunc(a, b, func(x, y TargetResult) bool {
		return x.Method == y.Method && x.URL == y.URL && x.Weight == y.Weight
	})
}

// mergeTargets adds the parts' per-target counts and histograms.
func mergeTargets(out *Result, parts []*part) error {
	first := parts[0].res.Targets
	if len(first) == 0 {
		return nil
	}
	out.Targets = make([]TargetResult, len(first))
	for i, t := range first {
		sum := TargetResult{Method: t.Method, URL: t.URL, Weight: t.Weight}
		var hs []*hdr.Histogram
		for _, p := range parts {
			pt := p.res.Targets[i]
			sum.Requests += pt.Requests
			sum.OK += pt.OK
			sum.Non2xx += pt.Non2xx
			sum.Errors += pt.Errors
			h, err := DecodeHist(pt.Hist)
			if err != nil {
				return usage("%s: target %d's histogram: %v", p.name, i+1, err)
			}
			if h != nil {
				hs = append(hs, h)
			}
		}
		if len(hs) == len(parts) {
			h := emptyLike(hs)
			for _, x := range hs {
				h.Merge(x)
			}
			sum.Latency = LatencyOf(h)
			sum.Hist, _ = EncodeHist(h)
		}
		out.Targets[i] = sum
	}
	return nil
}

// Result returns the merged result. It fails (a one-line *UsageError)
// when nothing was added or, unless Partial, when a shard of the run is
// missing.
func (m *Merger) Result() (*Result, error) {
	if len(m.parts) == 0 {
		return nil, usage("nothing to merge: give the results of a run's shards")
	}
	parts := slices.Clone(m.parts)
	first := parts[0]
	if !first.log {
		slices.SortStableFunc(parts, func(a, b *part) int { return slices.Min(a.covers) - slices.Min(b.covers) })
		first = parts[0]
	}
	n := first.count
	have := map[int]bool{}
	for _, p := range parts {
		for _, i := range p.covers {
			have[i] = true
		}
	}
	var missing []string
	for i := 0; i < n; i++ {
		if !have[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 && !m.Partial {
		return nil, usage("shard %s missing (%d of %d given): give every shard's result, or merge a partial run explicitly",
			strings.Join(missing, ", "), len(have), n)
	}

	out := &Result{
		Target:   first.res.Target,
		Protocol: first.res.Protocol,
		Streams:  first.res.Streams,
		Mode:     first.res.Mode,
		WarmupS:  first.res.WarmupS,
		Status:   map[string]uint64{},
		Errors:   map[string]uint64{},
	}
	if err := m.mergeHistograms(out, parts); err != nil {
		return nil, err
	}
	m.mergeCounts(out, parts)
	if err := mergeTargets(out, parts); err != nil {
		return nil, err
	}
	out.Stages = first.res.Stages
	mergeGenerator(out, parts, missing)
	if err := mergeSeconds(out, parts); err != nil {
		return nil, err
	}
	if s := first.res.Schedule; s != nil {
		sched := *s
		lo, hi := first.start, first.start
		for _, p := range parts {
			lo, hi = minTime(lo, p.start), maxTime(hi, p.start)
		}
		sched.Start = lo
		sched.StartSkewMs = units.Round3(float64(hi.Sub(lo)) / 1e6)
		out.Schedule = &sched
		if sched.StartSkewMs > 0 {
			out.Generator.Notes = append(out.Generator.Notes, fmt.Sprintf("the shards' schedules started up to %.3f ms apart (each process's own +DURATION start): each shard's requests are offset by its skew; give every shard one absolute {StartAt} for the exact schedule", sched.StartSkewMs))
		}
		if len(missing) == 0 && len(out.Stages) == 0 {
			out.RequestedRate = s.Rate // exact, not a sum of shares
		}
	}
	return out, nil
}

// mergeHistograms adds the parts' histograms and sets the latency
// percentiles from them.
func (m *Merger) mergeHistograms(out *Result, parts []*part) error {
	add := func(what string, get func(*part) *hdr.Histogram) (*hdr.Histogram, error) {
		var hs []*hdr.Histogram
		for _, p := range parts {
			if h := get(p); h != nil {
				hs = append(hs, h)
			}
		}
		if len(hs) == 0 {
			return nil, nil
		}
		sum := emptyLike(hs)
		for i, h := range hs {
			if dropped := sum.Merge(h); dropped > 0 {
				return nil, usage("%s histogram of %s: %d values did not fit the merged range", what, parts[i].name, dropped)
			}
		}
		return sum, nil
	}
	var err error
	if out.CorrectedHist, err = add("corrected", func(p *part) *hdr.Histogram { return p.corrected }); err != nil {
		return err
	}
	if out.UncorrectedHist, err = add("uncorrected", func(p *part) *hdr.Histogram { return p.uncorrected }); err != nil {
		return err
	}
	ok, err := add("2xx", func(p *part) *hdr.Histogram { return p.ok })
	if err != nil {
		return err
	}
	hs, err := add("handshake", func(p *part) *hdr.Histogram { return p.handshake })
	if err != nil {
		return err
	}
	out.Latency = LatencyOf(out.CorrectedHist)
	if ok != nil {
		out.Corrected2xxHist = ok
		out.Latency2xx = LatencyOf(ok)
	}
	if out.UncorrectedHist != nil {
		out.LatencyUncorrected = LatencyOf(out.UncorrectedHist)
	}
	if hs != nil {
		l := LatencyOf(hs)
		out.HandshakeUs = &l
	}
	enc := &EncodedHistograms{}
	for _, e := range []struct {
		h   *hdr.Histogram
		dst *string
	}{{out.CorrectedHist, &enc.Corrected}, {ok, &enc.OK}, {out.UncorrectedHist, &enc.Uncorrected}, {hs, &enc.Handshake}} {
		if *e.dst, err = EncodeHist(e.h); err != nil {
			return err
		}
	}
	out.Histograms = enc
	return nil
}

// emptyLike returns an empty histogram that holds every value of hs: the
// widest range and the lowest precision among them.
func emptyLike(hs []*hdr.Histogram) *hdr.Histogram {
	lo, hi, sig := hs[0].LowestTrackableValue(), hs[0].HighestTrackableValue(), hs[0].SignificantFigures()
	for _, h := range hs[1:] {
		lo = min(lo, h.LowestTrackableValue())
		hi = max(hi, h.HighestTrackableValue())
		sig = min(sig, h.SignificantFigures())
	}
	return hdr.New(lo, hi, int(sig))
}

// mergeCounts sums the counters and the rates. Each shard's rate is over
// its own measured window; the merged rate is their sum and duration_s the
// window every shard covered (the shortest).
func (m *Merger) mergeCounts(out *Result, parts []*part) {
	out.DurationS = math.Inf(1)
	var tls *TLSInfo
	var sum Tally
	for _, p := range parts {
		r := p.res
		sum.Add(TallyOf(r))
		out.DurationS = min(out.DurationS, r.DurationS)
		out.Connections += r.Connections
		out.RequestedRate += r.RequestedRate
		out.AchievedRate += r.AchievedRate
		out.ThroughputGbps += r.ThroughputGbps
		out.HandshakeRate += r.HandshakeRate
		out.Interrupted = out.Interrupted || r.Interrupted
		if out.QUICVersion == "" {
			out.QUICVersion = r.QUICVersion
		}
		if r.H2 != nil {
			out.H2 = r.H2.add(out.H2)
		}
		if t := r.TLS; t != nil && tls == nil {
			c := *t // the sessions' kind, from the first shard that had any; the counts are the tally's
			tls = &c
		}
		out.Shards = append(out.Shards, summaries(p)...)
	}
	slices.SortStableFunc(out.Shards, func(a, b ShardSummary) int { return a.Shard.Index - b.Shard.Index })
	out.TLS = tls
	sum.Set(out)
	out.AchievedRate = units.Round3(out.AchievedRate)
	out.ThroughputGbps = units.Round3(out.ThroughputGbps)
	out.HandshakeRate = units.Round3(out.HandshakeRate)
	if out.HandshakeUs == nil && out.Handshakes > 0 {
		// Handshake percentiles cannot be added without histograms.
		out.Generator.Notes = append(out.Generator.Notes, "handshake percentiles are not merged: a shard's result has no handshake histogram")
	}
}

// summaries returns the shard list entries of p: its own, or those it
// holds when it is a merged result itself.
func summaries(p *part) []ShardSummary {
	r := p.res
	if len(r.Shards) > 0 {
		return slices.Clone(r.Shards)
	}
	sh := r.Shard.orWhole()
	return []ShardSummary{{
		Source: p.name, Shard: sh, Host: r.Host, Start: p.start,
		DurationS: r.DurationS, Requests: r.Requests, OK: r.OK, Errors: r.ErrorCount(),
		AchievedRate: r.AchievedRate, Latency: r.Latency, Generator: r.Generator, Interrupted: r.Interrupted,
	}}
}

// mergeGenerator keeps every shard's verdict in out.Shards and sums them
// up in out.Generator: a bottleneck in any shard is the merged result's,
// named by shard and host.
func mergeGenerator(out *Result, parts []*part, missing []string) {
	g := &out.Generator
	var reasons []string
	seen := map[string]bool{}
	for _, n := range g.Notes {
		seen[n] = true
	}
	for _, s := range out.Shards {
		sg := s.Generator
		g.CPUs = append(g.CPUs, sg.CPUs...)
		g.Busy = append(g.Busy, sg.Busy...)
		g.Starved = append(g.Starved, sg.Starved...)
		g.Idle = append(g.Idle, sg.Idle...)
		g.CPUSeconds = append(g.CPUSeconds, sg.CPUSeconds...)
		g.Loops += sg.Loops
		// A quantile of the merged lag is at most the largest of the
		// shards' (the lag histograms are not in the results).
		g.LagP50us = max(g.LagP50us, sg.LagP50us)
		g.LagP95us = max(g.LagP95us, sg.LagP95us)
		g.LagP99us = max(g.LagP99us, sg.LagP99us)
		g.LagP999us = max(g.LagP999us, sg.LagP999us)
		g.LagMaxus = max(g.LagMaxus, sg.LagMaxus)
		g.LateSends += sg.LateSends
		g.Dropped += sg.Dropped
		g.MaxPending += sg.MaxPending
		g.Unfinished += sg.Unfinished
		g.TimeWaitPeak = max(g.TimeWaitPeak, sg.TimeWaitPeak)
		g.Unsolicited += sg.Unsolicited
		if g.Spill == "" || sg.Spill == SpillMemory { // one shard's histograms in memory: the merged result says so
			g.Spill = sg.Spill
		}
		g.LagCaveats = append(g.LagCaveats, sg.LagCaveats...)
		if sg.Bottleneck {
			g.Bottleneck = true
			reasons = append(reasons, fmt.Sprintf("shard %d/%d%s: %s", s.Shard.Index, s.Shard.Count, onHost(s.Host), sg.Reason))
		}
		for _, n := range sg.Notes {
			if !seen[n] {
				seen[n] = true
				g.Notes = append(g.Notes, n)
			}
		}
	}
	g.Reason = strings.Join(reasons, "; ")
	if len(missing) > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("partial merge: shard %s missing; counts and rates are those of the shards present", strings.Join(missing, ", ")))
	}
	if len(parts) > 1 {
		var short []string
		for _, s := range out.Shards {
			if s.DurationS > out.DurationS*1.01 {
				short = append(short, fmt.Sprintf("%d/%d", s.Shard.Index, s.Shard.Count))
			}
		}
		if len(short) > 0 {
			g.Notes = append(g.Notes, fmt.Sprintf("measured windows differ (shortest %.3fs): rates are the sum of each shard's rate over its own window; shards %s ran longer", out.DurationS, strings.Join(short, ", ")))
		}
	}
}

func onHost(h string) string {
	if h == "" {
		return ""
	}
	return " on " + h
}

// mergeSeconds aligns the parts' per-second series by wall clock (second t
// of a part is at its schedule start + t) and adds them up: counts are
// summed, the p99 of a second is computed from the added histograms of
// that second. Histograms are decoded one second at a time, so a long run
// of many shards does not hold them all at once.
func mergeSeconds(out *Result, parts []*part) error {
	origin := parts[0].start
	for _, p := range parts {
		origin = minTime(origin, p.start)
	}
	type slot struct {
		ps    PerSecond
		hists []string
		n     int // parts with this second
	}
	slots := map[int]*slot{}
	withHist := true
	for _, p := range parts {
		off := int(math.Round(float64(p.start.Sub(origin)) / 1e9))
		prev := -1
		for _, s := range p.res.PerSecond {
			t := s.T + off
			if s.T <= prev {
				return usage("%s: per-second entry t=%d after t=%d: the series is damaged", p.name, s.T, prev)
			}
			prev = s.T
			sl := slots[t]
			if sl == nil {
				sl = &slot{ps: PerSecond{T: t}}
				slots[t] = sl
			}
			switch {
			case sl.n == 0:
				sl.ps.TimeWait = s.TimeWait
			case sl.ps.TimeWait < 0 || s.TimeWait < 0:
				sl.ps.TimeWait = -1 // a shard could not read it
			default:
				sl.ps.TimeWait += s.TimeWait
			}
			sl.n++
			sl.ps.OK += s.OK
			sl.ps.Non2xx += s.Non2xx
			sl.ps.Errors += s.Errors
			sl.ps.Bytes += s.Bytes
			if s.Offered != nil {
				v := *s.Offered
				if sl.ps.Offered != nil {
					v = units.Round3(v + *sl.ps.Offered)
				}
				sl.ps.Offered = &v
			}
			sl.ps.DurS = max(sl.ps.DurS, s.DurS) // the span the shards' entries cover
			sl.ps.P99us = max(sl.ps.P99us, s.P99us)
			sl.ps.Maxus = max(sl.ps.Maxus, s.Maxus)
			if s.Hist == "" {
				withHist = false
			}
			sl.hists = append(sl.hists, s.Hist)
		}
	}
	ts := slices.Sorted(maps.Keys(slots))
	for _, t := range ts {
		sl := slots[t]
		if !origin.IsZero() {
			sl.ps.AtMs = origin.Add(time.Duration(sl.ps.T) * time.Second).UnixMilli()
		}
		if withHist && len(sl.hists) > 0 {
			var hs []*hdr.Histogram
			for _, e := range sl.hists {
				h, err := DecodeHist(e)
				if err != nil {
					return usage("per-second histogram of second %d: %v", sl.ps.T, err)
				}
				hs = append(hs, h)
			}
			sum := emptyLike(hs)
			for _, h := range hs {
				sum.Merge(h)
			}
			sl.ps.P99us, sl.ps.Maxus = sum.ValueAtQuantile(99), sum.Max()
			enc, err := EncodeHist(sum)
			if err != nil {
				return err
			}
			sl.ps.Hist = enc
		}
		out.PerSecond = append(out.PerSecond, sl.ps)
	}
	if !withHist && len(out.PerSecond) > 0 {
		out.Generator.Notes = append(out.Generator.Notes, "per-second p99 is the largest of the shards' (a shard's result has no per-second histograms)")
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// add returns sum plus h (sum nil: a copy of h): the counts add up, the
// server's stream limit is the lowest of both.
func (h *H2Info) add(sum *H2Info) *H2Info {
	if sum == nil {
		sum = &H2Info{}
	}
	sum.GoAways += h.GoAways
	sum.Refused += h.Refused
	if s := h.ServerMaxStreams; s > 0 && (sum.ServerMaxStreams == 0 || s < sum.ServerMaxStreams) {
		sum.ServerMaxStreams = s
	}
	sum.ResetCodes = addCounts(sum.ResetCodes, h.ResetCodes)
	sum.GoAwayCodes = addCounts(sum.GoAwayCodes, h.GoAwayCodes)
	return sum
}

func addCounts(sum, m map[string]uint64) map[string]uint64 {
	for k, v := range m {
		if sum == nil {
			sum = map[string]uint64{}
		}
		sum[k] += v
	}
	return sum
}
