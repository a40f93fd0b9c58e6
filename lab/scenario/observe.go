package scenario

import (
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/watch"
)

// Observer hears a lab run as it goes: each measured step as it starts and
// as it is recorded. The live metrics and the live report page are
// observers. Both calls come from the runner's goroutine, between the
// step's I/O: an observer must return quickly and must not keep the step or
// the file past the call (the runner changes them next).
type Observer interface {
	// StepStart is called just before the generator runs a step; the
	// observer it returns, if not nil, watches the step's generator run
	// (gen.Observer).
	StepStart(s StepInfo) gen.Observer
	// StepDone is called once the step is in results.json (f is the whole
	// run so far).
	StepDone(s StepInfo, st *results.Step, f *results.File)
}

// StepInfo names the step now running and where the run stands.
type StepInfo struct {
	Plan     string
	Scenario string
	Profile  string
	Key      string
	Layout   string
	Round    int // 0 in a plan of one round
	Seq      int
	Phase    string
	Rate     float64 // 0: closed loop
	Duration time.Duration

	// Proxy and Backend sample the proxy's and the backend's cgroups
	// while the step runs (StepStart only; nil when not watched).
	Proxy, Backend *watch.Watcher

	Done  int           // steps finished, this one included once done
	Steps int           // the budget's estimate of all steps (at least Done)
	ETA   time.Duration // the budget left
	At    time.Time     // when this was said
}

// Observers is an Observer that tells each of its members in turn.
type Observers []Observer

func (ws Observers) StepStart(s StepInfo) gen.Observer {
	var obs genObservers
	for _, w := range ws {
		if o := w.StepStart(s); o != nil {
			obs = append(obs, o)
		}
	}
	if len(obs) == 0 {
		return nil
	}
	return obs
}

func (ws Observers) StepDone(s StepInfo, st *results.Step, f *results.File) {
	for _, w := range ws {
		w.StepDone(s, st, f)
	}
}

// genObservers is a gen.Observer that tells each of its members in turn.
type genObservers []gen.Observer

func (os genObservers) Second(lv *result.Live) {
	for _, o := range os {
		o.Second(lv)
	}
}

func (os genObservers) End(lv *result.Live) {
	for _, o := range os {
		o.End(lv)
	}
}

// stepInfo is what the observers hear of unit u's step seq.
func (u *unitRun) stepInfo(seq int, phase string, rate float64, d time.Duration) StepInfo {
	s := StepInfo{Plan: u.r.Plan.Name, Scenario: u.spec.Scenario.Name, Profile: u.spec.Profile.Name, Key: string(u.spec.Key),
		Layout: u.spec.Layout, Round: u.stepRound(), Seq: seq, Phase: phase, Rate: rate, Duration: d}
	s.Done, s.Steps, s.ETA = u.r.prog.standing()
	s.At = u.r.Now()
	return s
}
