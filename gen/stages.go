package gen

import (
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/result"
)

// Rate stages (k6's stages): the offered rate ramps linearly over each
// stage from where the previous one ended (the first from 0) to the
// stage's Rate. A stage of length 0 jumps: "0s:1000,30s:1000" is a
// constant 1000/s for 30 s, which is what Config.Rate alone means. Both
// become one run.Pacer, whose integral gives the intended times and the
// per-second offered rate.

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
	if newPacer(st).Total() < 1 {
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

// newPacer is the rate model of stages (run.Pacer).
func newPacer(st []Stage) *run.Pacer {
	p := new(run.Pacer)
	for _, s := range st {
		p.Ramp(s.Duration, s.Rate)
	}
	return p
}
