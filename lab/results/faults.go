package results

import (
	"strconv"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/proc"
	"github.com/loadlab/loadlab/lab/watch"
)

// ProcessExit is a proxy or backend that died during a step: it exited,
// was killed by a signal, or had a process OOM-killed in its cgroup.
type ProcessExit struct {
	T        float64 `json:"t_s"`                     // seconds into the step: from the generator's schedule start, warmup included (the clock of per_second's t)
	ExitCode *int    `json:"exit_code,omitempty"`     // the exit status of the process the lab started, when it exited by itself
	Signal   string  `json:"signal,omitempty"`        // the signal that killed it ("SIGKILL"); an OOM kill that took only workers also says SIGKILL
	OOM      bool    `json:"oom"`                     // the kernel's OOM killer killed a process of its cgroup (the plan's memory limit)
	OOMKills uint64  `json:"oom_kills,omitempty"`     // how many
	Survived bool    `json:"main_survived,omitempty"` // the process the lab started still ran (an OOM kill took a worker it forked)
	// FailedAfter counts the requests that failed or got a non-2xx answer
	// from the second of the death to the end of the step.
	FailedAfter uint64 `json:"failed_after"`
	Restarted   bool   `json:"restarted"`               // started again for the next step
	Restart     string `json:"restart_error,omitempty"` // why it could not be
}

// NewProcessExit describes d relative to a step whose generator started at
// start, counting the failures of res (nil: none known) from then on.
// The generator's schedule start, when res has it, replaces start, so that
// t_s runs on the clock of res's per_second t.
func NewProcessExit(d *watch.Death, start time.Time, res *result.Result) *ProcessExit {
	if res != nil && res.Schedule != nil && !res.Schedule.Start.IsZero() {
		start = res.Schedule.Start
	}
	t := d.At.Sub(start).Seconds()
	if t < 0 {
		t = 0 // died before the generator started
	}
	x := &ProcessExit{T: units.Round3(t), OOM: d.OOM(), OOMKills: d.OOMKills, Survived: !d.Exited}
	switch {
	case d.Exited && d.Exit.Signal != 0:
		x.Signal = proc.SignalName(d.Exit.Signal)
	case d.Exited:
		c := d.Exit.Code
		x.ExitCode = &c
	case d.OOM():
		x.Signal = "SIGKILL" // what the OOM killer sends
	}
	if res != nil {
		from := int(t)
		for _, s := range res.Seconds {
			if s.T >= from {
				x.FailedAfter += s.Errors + s.Non2xx
			}
		}
	}
	return x
}

// How says how it died: "was killed by SIGKILL", "exited with status 1",
// "was OOM-killed", "had 2 processes OOM-killed".
func (x *ProcessExit) How() string {
	switch {
	case x.OOM && x.Survived:
		if x.OOMKills == 1 {
			return "had a process OOM-killed"
		}
		return "had " + strconv.FormatUint(x.OOMKills, 10) + " processes OOM-killed"
	case x.OOM:
		return "was OOM-killed"
	case x.Signal != "":
		return "was killed by " + x.Signal
	case x.ExitCode != nil:
		return "exited with status " + strconv.Itoa(*x.ExitCode)
	}
	return "died"
}
