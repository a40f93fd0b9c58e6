package gen

import (
	"context"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/result"
)

// Observer watches a run as it goes: the CLI's progress line and its
// HdrHistogram log (result.HdrLog), the metrics endpoint (gen/metrics) and
// the lab's step observers are observers. Run calls Second once a second,
// and End once after the run, with the result's own numbers (Final), both
// from one goroutine of the run, one observer after the other. They must
// return quickly and not keep the Live, or what it points to, past the
// call. A run with observers records each response's latency once more
// (the measured window's histograms they are given); one without records
// nothing for them.
type Observer interface {
	Second(lv *result.Live)
	End(lv *result.Live)
}

// Run executes one load run and returns its result. It returns an error
// when the run could not start (bad Config: a *UsageError; unreachable
// target, no permission: a plain error); then the result is nil. Once
// started, every failure of a request is a counted request error and the
// result is returned; but when the generator's own I/O fails (a loop's
// io_uring), the run stops at once and Run returns both its result, in
// which every owed request has its one outcome, and that error. Cancelling
// ctx stops the run early; the result then has Interrupted set. The
// observers (see Observer) watch it as it goes.
func Run(ctx context.Context, cfg Config, obs ...Observer) (*result.Result, error) {
	cfg.Defaults()
	p, err := cfg.Prepare()
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, obs...)
}

// Run runs the prepared run p (see Run: the same results and errors, but
// for the checks Prepare made already).
func (p *Prepared) Run(ctx context.Context, obs ...Observer) (*result.Result, error) {
	res, err := run.Execute(ctx, p.spec, engineOf(p.spec), runObservers(obs))
	if err == nil && len(p.thresholds) > 0 {
		res.Thresholds, _ = result.CheckThresholds(p.thresholds, res)
	}
	return res, err
}

// runObservers passes obs on to the run core.
func runObservers(obs []Observer) []run.Observer {
	ros := make([]run.Observer, len(obs))
	for i, o := range obs {
		ros[i] = o
	}
	return ros
}
