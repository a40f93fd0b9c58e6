package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// longStep is the step length from which the progress also says when a
// step starts.
const longStep = 10 * time.Second

// watchEvery is how often the proxy's cgroup and TIME_WAIT are sampled.
const watchEvery = time.Second

// step runs (or replays from the record) the next step of the unit.
func (u *unitRun) step(ctx context.Context, phase string, rate float64, confirm, run int) (search.Outcome, error) {
	u.seq++
	seq := u.seq
	if seq <= len(u.rec.Steps) {
		old := u.rec.Steps[seq-1]
		if old.Phase == phase && old.Rate == rate && old.Confirm == confirm && old.Run == run && old.Round == u.stepRound() && !old.Interrupted && old.Error == "" && old.ProxyExit == nil && old.BackendExit == nil {
			u.replayed[seq] = true
			o := search.Outcome{Verdict: search.Verdict(old.Verdict), Reasons: old.Reasons}
			u.r.prog.stepDone(u.spec, phase, rate, o, "", true)
			return o, nil
		}
		// The record diverges here (an interrupted step): drop the rest.
		u.rec.Steps = u.rec.Steps[:seq-1]
	}
	st := &results.Step{Seq: seq, Phase: phase, Rate: rate, Confirm: confirm, Run: run, Round: u.stepRound(), Connections: u.spec.Scenario.Connections}
	if err := u.ensureProxy(ctx); err != nil {
		if ue := (errUnit{}); errors.As(err, &ue) && errors.As(ue.err, new(errStart)) {
			// The server never served this step: it died starting.
			st.Verdict, st.Error, st.Started = string(search.Died), err.Error(), u.r.Now().UTC()
			u.r.prog.printf("    step %d (%s %s) died: %v", seq, phase, rateWords(rate), err)
			if serr := u.record(st); serr != nil {
				return search.Outcome{}, serr
			}
		}
		return search.Outcome{}, err
	}
	if err := u.cleanSlate(ctx, st); err != nil {
		return search.Outcome{}, err
	}
	s := u.spec.Scenario
	base := gen.Config{
		URL:          targetURL(s),
		Connections:  s.Connections,
		Timeout:      u.r.Plan.Timeout.D(),
		IO:           u.r.Plan.IO,
		Rate:         rate,
		NewConn:      s.Kind == plan.KindHandshake,
		HTTP3:        s.Kind == plan.KindH3,
		HTTP2:        s.Kind == plan.KindKeepaliveH2,
		VerifySHA256: verifyDigest(s, u.px.Profile()),
		// The wake floor during the step (beside the generator's loops),
		// not after it: the host's lateness at the moments measured.
		WakeProbe: true,
	}
	if rate > 0 {
		base.PacingTolerance = s.Eff.PacingTolerance.D()
	}
	if s.Kind == plan.KindHandshake {
		// The proxy's chain was verified against the lab's CA when it
		// started (the session's readiness handshake); the handshake
		// steps skip the generator's per-handshake check, so its CPU goes
		// to making the proxy handshake (the proxy still signs each one).
		base.TLS.Insecure = true
	}
	switch phase {
	case string(search.PhaseConfirm):
		base.Duration, base.Warmup = s.Eff.Search.ConfirmStep.D(), s.Eff.Search.Discard.D()
	case results.PhaseRun:
		base.Duration, base.Warmup = s.Duration.D(), s.Warmup.D()
	default:
		base.Duration, base.Warmup = s.Eff.Search.Step.D(), s.Eff.Search.Discard.D()
	}
	aim := u.px.Aim()
	if h := s.HostHeader(); h != "" && u.start == nil {
		aim.ServerName = h // seed 001's hey -host: one of the proxy's routes
	}
	cfg := aim.Config(base)
	if s.Spread {
		if err := u.spreadTargets(&cfg); err != nil {
			return search.Outcome{}, errUnit{fmt.Errorf("step %d: %v", seq, err)}
		}
	}
	st.Started = u.r.Now().UTC()

	if base.Duration >= longStep {
		u.r.prog.stepStart(u.spec, seq, phase, rate, base.Duration)
	}
	before, berr := u.session.BackendStats()
	if berr == nil {
		st.BackendReqsBefore = before.Requests
	}
	nc, _ := u.session.(NetCounters)
	var extBefore map[string]uint64
	if nc != nil {
		st.Sysctls = u.readSysctls(nc)
		extBefore, _ = nc.TCPExt()
	}
	addr0 := u.addrErrors()
	w := u.px.Watch(watchEvery)
	bw := u.watchBackend()
	life := u.watchLife()
	if u.r.Watch != nil {
		si := u.stepInfo(seq, phase, rate, base.Duration)
		si.Proxy, si.Backend = w, bw
		u.r.Watch.StepStart(si, &cfg)
	}
	genStart := time.Now()
	h0 := u.r.host.mark()
	res, err := u.r.Gen(ctx, cfg)
	if res != nil {
		res.Words(nil) // the generator's notes name its Config fields: plain names here
	}
	st.Host = u.r.host.shares(h0, u.r.host.mark())
	samples := w.Stop()
	life.stop(st, genStart, res)
	after, aerr := u.session.BackendStats()
	if nc != nil {
		if extAfter, err := nc.TCPExt(); err == nil {
			st.TCPExt = results.TCPExtDelta(extBefore, extAfter)
		}
	}

	st.Proxy = results.FromWatch(samples)
	st.ProxySum = results.Summarize(st.Proxy, base.Warmup.Seconds())
	if bw != nil {
		st.BackendSamples = results.FromWatch(bw.Stop())
		st.BackendSum = results.Summarize(st.BackendSamples, base.Warmup.Seconds())
	}
	setForeign(st)
	markNoisy(st)
	if addr1 := u.addrErrors(); addr0 >= 0 && addr1 > addr0 {
		st.ProxyAddrErrors = addr1 - addr0
	}
	if berr == nil && aerr == nil && after.Accepted >= before.Accepted && after.Requests >= before.Requests {
		st.Backend = results.BackendDelta{Accepted: after.Accepted - before.Accepted, Requests: after.Requests - before.Requests, Apps: appsDelta(before.Apps, after.Apps), Valid: true}
	}
	var o search.Outcome
	if err != nil {
		st.Error = err.Error()
		st.Verdict = string(search.Fail)
		if serr := u.record(st); serr != nil {
			return o, serr
		}
		if ctx.Err() != nil {
			return o, ctx.Err()
		}
		if gen.IsUsage(err) {
			return o, fmt.Errorf("scenario %s: the generator refused the step: %v", s.Name, err)
		}
		return o, errUnit{fmt.Errorf("step %d (%s %s): %v", seq, phase, rateWords(rate), err)}
	}
	st.Result = res
	st.Spectrum = results.Spectrum(res.CorrectedHist)
	st.Interrupted = res.Interrupted
	o = search.Judge(criteria(s.Eff.Pass), search.MeasureOf(res))
	if r := diedReason(st); r != "" {
		// Not a failed step: what it measured was a dead server.
		o = search.Outcome{Verdict: search.Died, Reasons: append([]string{r}, o.Reasons...)}
	}
	st.Verdict, st.Reasons = string(o.Verdict), o.Reasons
	u.limitStep(st)
	if serr := u.record(st); serr != nil {
		return o, serr
	}
	if res.Interrupted {
		u.r.prog.printf("    step %d (%s %s) interrupted after %.1f s: recorded partial, it runs again on resume", seq, phase, rateWords(rate), res.DurationS+res.WarmupS)
	} else {
		u.r.prog.stepDone(u.spec, phase, rate, o, stepDetail(res, st), false)
	}
	if u.r.Watch != nil {
		u.r.Watch.StepDone(u.stepInfo(seq, phase, rate, base.Duration), st, u.r.Store.F)
	}
	if res.Interrupted || ctx.Err() != nil {
		if err := ctx.Err(); err != nil {
			return o, err
		}
		return o, context.Canceled
	}
	return o, u.died(ctx, st)
}

// cleanSlate prepares the start of a step: in netns mode fresh namespaces
// with the backend and the proxy restarted in them (a new namespace has no
// TIME_WAIT socket and its own port range); in every mode it counts the
// TIME_WAIT sockets the step starts with and says loudly when that is above
// the limit (netns: 0; loopback: the count when the session opened plus
// cooldown_margin), since such a step is skewed by what ran before.
func (u *unitRun) cleanSlate(ctx context.Context, st *results.Step) error {
	limit := u.timeWaitLimit()
	if u.session.Net() == plan.NetNetns {
		took, err := u.session.Renew(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errUnit{fmt.Errorf("step %d: %v", st.Seq, err)}
		}
		st.RenewS = round2(took.Seconds())
		limit = 0
	}
	st.StartTimeWait, st.StartChecked = timeWait(u.session), true
	if st.StartTimeWait > limit {
		st.StartUnclean = true
		u.r.prog.printf("    %s: step %d starts with %d sockets in TIME_WAIT (limit %d)%s: its result may be skewed by what ran before", loudness(u.r.Machine, st.StartTimeWait), st.Seq, st.StartTimeWait, limit, rangeShare(u.r.Machine, st.StartTimeWait))
	}
	return nil
}

// loudShare is the share of the port range in TIME_WAIT from which a step
// that starts above its limit is a WARNING, not a note.
const loudShare = 0.05

// loudness is "WARNING" when n sockets in TIME_WAIT are a material share of
// the port range (or the range is unknown), else "note".
func loudness(m results.Machine, n int) string {
	if p := m.Ports(); p > 0 && float64(n) < loudShare*float64(p) {
		return "note"
	}
	return "WARNING"
}

// timeWaitLimit is the TIME_WAIT count a loopback step may start with: the
// count when the session opened plus the plan's cooldown_margin.
func (u *unitRun) timeWaitLimit() int {
	limit := u.spec.Scenario.Eff.Search.CooldownMargin
	if u.baseline > 0 {
		limit += u.baseline
	}
	return limit
}

// rangeShare says which share of the ephemeral port range n is.
func rangeShare(m results.Machine, n int) string {
	if p := m.Ports(); p > 0 {
		return fmt.Sprintf(" (%.0f%% of the %s-port range)", 100*float64(n)/float64(p), units.Int(int64(p)))
	}
	return ""
}

// appsDelta is each named backend's requests during the step (nil when
// the readings do not pair up).
func appsDelta(before, after []uint64) []uint64 {
	if len(after) == 0 || len(before) != len(after) {
		return nil
	}
	out := make([]uint64, len(after))
	for i := range after {
		if after[i] < before[i] {
			return nil // the backend restarted between the readings
		}
		out[i] = after[i] - before[i]
	}
	return out
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// record appends the step to the unit and saves results.json.
func (u *unitRun) record(st *results.Step) error {
	return u.r.Store.Update(func(*results.File) { u.rec.Steps = append(u.rec.Steps, st) })
}

func criteria(p plan.Pass) search.Criteria {
	return search.Criteria{P95: p.P95.D(), P99: p.P99.D(), MaxErrors: p.MaxErrors, MinAchieved: p.MinAchieved}
}

func rateWords(rate float64) string {
	if rate == 0 {
		return "closed loop"
	}
	return units.Rate(rate) + " req/s"
}

// stepDetail is the short summary of a step for the progress line.
func stepDetail(r *result.Result, st *results.Step) string {
	s := fmt.Sprintf("%s/s 2xx, p99 %s", units.Rate(r.AchievedRate), units.Micros(r.Latency.P99))
	if bad := r.Requests - min(r.OK, r.Requests); bad > 0 {
		s += fmt.Sprintf(", %d failed or non-2xx", bad)
	}
	if st.ProxySum.Samples > 0 {
		s += fmt.Sprintf(", proxy %.2f cores", st.ProxySum.CPUAvg)
	}
	if st.ProxySum.TimeWaitMax > 0 {
		s += fmt.Sprintf(", TIME_WAIT up to %d", st.ProxySum.TimeWaitMax)
	}
	return s
}

// readSysctls reads back the scenario's kernel settings in the proxy's
// namespace; a failed read is said on the progress line and records none.
func (u *unitRun) readSysctls(nc NetCounters) map[string]string {
	if len(u.spec.Scenario.Sysctls) == 0 {
		return nil
	}
	m, err := nc.Sysctls()
	if err != nil {
		u.r.prog.printf("    note: cannot read back the sysctls: %v", err)
		return nil
	}
	return m
}
