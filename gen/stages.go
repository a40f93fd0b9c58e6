package gen

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

// Rate stages (k6's stages): the offered rate ramps linearly over each
// stage from where the previous one ended (the first from 0) to the
// stage's Rate. A stage of length 0 jumps: "0s:1000,30s:1000" is a
// constant 1000/s for 30 s, which is what Config.Rate alone means.
//
// Intended send times come from the integral of the rate: with N(t) the
// requests offered from the start to t, request j of the global schedule
// is due at the first t with N(t) = j, so coordinated-omission correction
// stays exact, shards split a staged schedule by j exactly as a constant
// one, and the per-second offered rate is N(t+1) - N(t).

// Stage is one leg of a staged rate.
type Stage struct {
	Duration time.Duration
	Rate     float64 // requests/s at the end of the stage
}

// maxStages bounds a stages list (a typo, not a program).
const maxStages = 1000

// maxRate is the highest rate a run may ask for.
const maxRate = 10e6

// ParseStages parses "DURATION:RATE,..." such as "30s:1000,60s:5000,30s:0".
func ParseStages(s string) ([]Stage, error) {
	bad := func(format string, args ...any) ([]Stage, error) {
		return nil, fieldErr("Stages", "bad stages %q: "+format, append([]any{s}, args...)...)
	}
	parts := strings.Split(s, ",")
	if strings.TrimSpace(s) == "" {
		return bad("give DURATION:RATE,... such as 30s:1000,60s:5000,30s:0")
	}
	if len(parts) > maxStages {
		return bad("more than %d stages", maxStages)
	}
	out := make([]Stage, 0, len(parts))
	for _, p := range parts {
		ds, rs, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			return bad("stage %q is not DURATION:RATE (e.g. 30s:1000)", p)
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil {
			return bad("stage %q: bad duration %q (e.g. 30s, 1m30s)", p, ds)
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rs), "/s")), 64)
		if err != nil {
			return bad("stage %q: bad rate %q (requests/s, e.g. 1000)", p, rs)
		}
		out = append(out, Stage{Duration: d, Rate: r})
	}
	if err := validateStages(out); err != nil {
		return nil, err
	}
	return out, nil
}

// FormatStages writes stages in the form ParseStages reads.
func FormatStages(st []Stage) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = s.Duration.String() + ":" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// StagesDuration is the run time of stages: the sum of their lengths.
func StagesDuration(st []Stage) time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// maxStagesDuration bounds a staged run (and keeps the sum from
// overflowing).
const maxStagesDuration = 7 * 24 * time.Hour

func validateStages(st []Stage) error {
	if len(st) > maxStages {
		return fieldErr("Stages", "%d stages, more than %d", len(st), maxStages)
	}
	var total time.Duration
	for i, s := range st {
		if s.Duration < 0 || s.Duration > maxStagesDuration {
			return fieldErr("Stages", "stage %d: duration %v must be between 0 and %v", i+1, s.Duration, maxStagesDuration)
		}
		if !(s.Rate >= 0) || s.Rate > maxRate {
			return fieldErr("Stages", "stage %d: rate %g must be between 0 and 10,000,000 requests/s", i+1, s.Rate)
		}
		total += s.Duration
		if total > maxStagesDuration {
			return fieldErr("Stages", "the stages last more than %v", maxStagesDuration)
		}
	}
	if total <= 0 {
		return fieldErr("Stages", "the stages last 0s: give at least one stage a duration")
	}
	if newRamp(st).total() < 1 {
		return fieldErr("Stages", "the stages offer less than one request: raise a rate or a duration")
	}
	return nil
}

// stagesInfo is st as results.json records it, for the whole run.
func stagesInfo(st []Stage) []result.StageInfo {
	if len(st) == 0 {
		return nil
	}
	out := make([]result.StageInfo, len(st))
	for i, s := range st {
		out[i] = result.StageInfo{DurationS: s.Duration.Seconds(), Rate: s.Rate}
	}
	return out
}

// rampSeg is one stage of positive length: from t0 to t1 (s since the
// start) the rate goes linearly from r0 to r1 (requests/s); n0 requests
// were offered before t0 and n1 by t1.
type rampSeg struct {
	t0, t1 float64
	r0, r1 float64
	n0, n1 float64
}

// ramp is the offered rate of a staged run as a function of time, with its
// integral.
type ramp struct {
	segs []rampSeg
}

// newRamp builds the rate function of stages.
func newRamp(st []Stage) *ramp {
	rp := &ramp{}
	t, n, prev := 0.0, 0.0, 0.0
	for _, s := range st {
		if s.Duration <= 0 {
			prev = s.Rate
			continue
		}
		d := s.Duration.Seconds()
		seg := rampSeg{t0: t, t1: t + d, r0: prev, r1: s.Rate, n0: n}
		n += (prev + s.Rate) / 2 * d
		seg.n1 = n
		rp.segs = append(rp.segs, seg)
		t += d
		prev = s.Rate
	}
	return rp
}

// total is the number of requests the stages offer, N(end).
func (rp *ramp) total() float64 {
	if len(rp.segs) == 0 {
		return 0
	}
	return rp.segs[len(rp.segs)-1].n1
}

// peak is the highest rate of the stages.
func (rp *ramp) peak() float64 {
	p := 0.0
	for _, s := range rp.segs {
		p = max(p, s.r0, s.r1)
	}
	return p
}

// count returns N(t), the requests offered from the start to t seconds.
func (rp *ramp) count(t float64) float64 {
	for _, s := range rp.segs {
		if t < s.t1 {
			if t <= s.t0 {
				return s.n0
			}
			x := t - s.t0
			b := (s.r1 - s.r0) / (s.t1 - s.t0)
			return s.n0 + s.r0*x + b*x*x/2
		}
	}
	return rp.total()
}

// at returns the intended time of global request j, ns since the start:
// the first t with N(t) = j, in a stage whose rate is not 0 throughout. It
// returns math.MaxInt64 for a j the stages do not reach. *hint is the
// segment to start looking in (the caller's previous answer, as one
// loop's j only grow); it is updated.
func (rp *ramp) at(j int64, hint *int) int64 {
	fj := float64(j)
	i := *hint
	if i >= len(rp.segs) || i < 0 || rp.segs[i].n0 > fj {
		i = 0
	}
	for ; i < len(rp.segs); i++ {
		s := &rp.segs[i]
		if s.n1 > s.n0 && s.n1 >= fj {
			break
		}
	}
	if i == len(rp.segs) {
		return math.MaxInt64
	}
	*hint = i
	s := &rp.segs[i]
	d := max(fj-s.n0, 0)
	// Solve n0 + r0 x + b x^2/2 = j for the least x >= 0, in the form that
	// stays exact when b is 0 or tiny: x = 2d / (r0 + sqrt(r0^2 + 2 b d)).
	b := (s.r1 - s.r0) / (s.t1 - s.t0)
	x := 0.0
	if d > 0 {
		disc := max(s.r0*s.r0+2*b*d, 0)
		x = 2 * d / (s.r0 + math.Sqrt(disc))
	}
	t := min(s.t0+x, s.t1)
	return int64(t * 1e9)
}
