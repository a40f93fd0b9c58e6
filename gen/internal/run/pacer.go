package run

import (
	"math"
	"time"
)

// Pacer is the open loop's rate model, the one for every run that has a
// rate (vegeta's Pacer): the offered rate as a function of time, piecewise
// linear, with its integral N(t), the requests offered from the start to
// t. A constant rate R over D is the one-stage ramp "0s:R,D:R"
// (Constant); stages (gen.Config.Stages) are the general case. Intended send times come from the
// integral: request j of the whole run's schedule is due at the first t
// with N(t) = j, so coordinated-omission correction stays exact and shards
// split any schedule by j alike.
//
// It is a concrete type, not an interface: the loops ask it for every
// request's intended time, and the driver stays the one dynamic call on
// the per-request path.
type Pacer struct {
	segs []paceSeg

	end, n, prev float64 // while stages are added: where the last one ended, N there, its rate
}

// paceSeg is one stage of positive length: from t0 to t1 (s since the
// start) the rate goes linearly from r0 to r1 (requests/s); n0 requests
// were offered before t0 and n1 by t1. nsPer is 1e9/r0 when the rate is
// constant over the segment (0 otherwise).
type paceSeg struct {
	t0, t1 float64
	r0, r1 float64
	n0, n1 float64
	nsPer  float64
}

// Ramp adds a stage to p and returns p: over d the rate ramps linearly
// from where the previous stage ended (the first from 0) to rate; a stage
// of length 0 jumps. Stages are added before p is used.
func (p *Pacer) Ramp(d time.Duration, rate float64) *Pacer {
	if d <= 0 {
		p.prev = rate
		return p
	}
	s := d.Seconds()
	seg := paceSeg{t0: p.end, t1: p.end + s, r0: p.prev, r1: rate, n0: p.n}
	if p.prev == rate && rate > 0 {
		seg.nsPer = 1e9 / rate
	}
	p.n += (p.prev + rate) / 2 * s
	seg.n1 = p.n
	p.segs = append(p.segs, seg)
	p.end += s
	p.prev = rate
	return p
}

// Constant is rate requests/s for d: the one-stage ramp "0s:R,D:R".
func Constant(rate float64, d time.Duration) *Pacer {
	return new(Pacer).Ramp(0, rate).Ramp(d, rate)
}

// Total is the number of requests p offers, N(end).
func (p *Pacer) Total() float64 { return p.n }

// Peak is the highest rate.
func (p *Pacer) Peak() float64 {
	m := 0.0
	for _, s := range p.segs {
		m = max(m, s.r0, s.r1)
	}
	return m
}

// Count returns N(t), the requests offered from the start to t seconds.
func (p *Pacer) Count(t float64) float64 {
	for _, s := range p.segs {
		if t < s.t1 {
			if t <= s.t0 {
				return s.n0
			}
			x := t - s.t0
			b := (s.r1 - s.r0) / (s.t1 - s.t0)
			return s.n0 + s.r0*x + b*x*x/2
		}
	}
	return p.n
}

// mean is the mean offered rate from a to b seconds (a < b): exactly the
// rate (exact true) when [a, b] lies within one segment of constant rate,
// as a constant rate's whole window does; else N's growth over the window
// divided by its length.
func (p *Pacer) mean(a, b float64) (rate float64, exact bool) {
	a, b = max(a, 0), min(b, p.end)
	for _, s := range p.segs {
		if s.nsPer > 0 && a >= s.t0 && b <= s.t1 {
			return s.r0, true
		}
	}
	if b <= a {
		return p.Peak(), false
	}
	return (p.Count(b) - p.Count(a)) / (b - a), false
}

// At returns the intended time of global request j, ns since the start:
// the first t with N(t) = j, in a segment whose rate is not 0 throughout.
// It returns math.MaxInt64 for a j the pacer does not reach. *hint is the
// segment to start looking in (the caller's previous answer, as one
// loop's j only grow); it is updated.
func (p *Pacer) At(j int64, hint *int) int64 {
	fj := float64(j)
	i := *hint
	if i >= len(p.segs) || i < 0 || p.segs[i].n0 > fj {
		i = 0
	}
	for ; i < len(p.segs); i++ {
		s := &p.segs[i]
		if s.n1 > s.n0 && s.n1 >= fj {
			break
		}
	}
	if i == len(p.segs) {
		return math.MaxInt64
	}
	*hint = i
	s := &p.segs[i]
	d := max(fj-s.n0, 0)
	if s.nsPer > 0 {
		// Constant rate: j/R in ns, computed as a constant rate always
		// was (to the nanosecond: shards and tests compare it exactly).
		return min(int64(s.t0*1e9+d*s.nsPer), int64(s.t1*1e9))
	}
	// Solve n0 + r0 x + b x^2/2 = j for the least x >= 0, in the form that
	// stays exact when b is tiny: x = 2d / (r0 + sqrt(r0^2 + 2 b d)).
	b := (s.r1 - s.r0) / (s.t1 - s.t0)
	x := 0.0
	if d > 0 {
		disc := max(s.r0*s.r0+2*b*d, 0)
		x = 2 * d / (s.r0 + math.Sqrt(disc))
	}
	t := min(s.t0+x, s.t1)
	return int64(t * 1e9)
}
