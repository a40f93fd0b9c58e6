package report

import (
	"fmt"

	"github.com/loadlab/loadlab/lab/results"
)

// portExhaustion: failures began while the proxy's TIME_WAIT filled the
// port range (or its error log says "Cannot assign requested address"),
// and the backend saw a new connection per request.
func portExhaustion(f *results.File, explained map[*results.Step]bool) []string {
	ports := f.Machine.Ports()
	done := map[string]bool{}
	var out []string
	eachStep(f, func(u *results.Unit, st *results.Step) {
		if done[u.Profile] {
			return
		}
		ff := firstFailure(st.Result.Seconds)
		if !ff.found || ff.okBefore == 0 {
			return
		}
		tw := maxTimeWait(st.Proxy)
		fullRange := ports > 0 && float64(tw) >= exhaustedShare*float64(ports)
		addrLines := 0
		if u.ErrorLog != nil {
			addrLines = u.ErrorLog.Causes["addr_not_avail"]
		}
		if !fullRange && addrLines == 0 {
			return
		}
		cpr := st.Backend.ConnsPerRequest()
		if cpr < newConnPerReq {
			return
		}
		done[u.Profile] = true
		explained[st] = true
		kind := "failed or non-2xx responses"
		if c := st.Result.Status["502"]; c > 0 && c*2 >= seriesFailures(st.Result.Seconds) {
			kind = "502s"
		}
		served := ff.okBefore
		s := fmt.Sprintf("%s (%s): %s began after %s successful requests (at t=%d s)", u.Profile, stepName(u, st), kind, fmtInt(int64(ff.okBefore)), ff.second)
		if ff.drySecond >= 0 && ff.okUntilDry > ff.okBefore {
			// The requests in flight when the ports ran out still
			// finished: the range served them too.
			served = ff.okUntilDry
			s = fmt.Sprintf("%s (%s): %s began at t=%d s, after %s successful requests in all (%s by the end of that second, the rest in flight then; none succeeded from t=%d s on)",
				u.Profile, stepName(u, st), kind, ff.second, fmtInt(int64(served)), fmtInt(int64(ff.okBefore)), ff.drySecond)
		}
		if fullRange {
			s += fmt.Sprintf(" while TIME_WAIT in the proxy's namespace reached %s of the %s-port range", fmtInt(int64(tw)), fmtInt(int64(ports)))
		}
		s += portsAccount(st, served, ports)
		if addrLines > 0 {
			s += fmt.Sprintf("; its error log has %s \"Cannot assign requested address\" lines", fmtInt(int64(addrLines)))
		}
		s += fmt.Sprintf("; the backend accepted %.2f new connections per request: the proxy opens a new backend connection per request and runs out of local ports. %s", cpr, fixFor(f, u))
		out = append(out, s)
	})
	return out
}

// fixFor points at the fix: a profile of the same proxy that ran the same
// scenario in this run without failures and with reused connections, or
// else the known fix profile (followed further when this run measured it
// and it did not hold up).
func fixFor(f *results.File, bad *results.Unit) string {
	for _, u := range f.Units {
		if u.Proxy != bad.Proxy || u.Profile == bad.Profile || u.Scenario != bad.Scenario {
			continue
		}
		if ok, cpr := heldUp(f, u.Profile, u.Scenario); ok {
			return fmt.Sprintf("Use %s: in this run it had no failures in %s and %.2f new backend connections per request.", u.Profile, u.Scenario, cpr)
		}
	}
	fix := knownFix[bad.Profile]
	for seen := map[string]bool{}; fix != "" && !seen[fix]; fix = knownFix[fix] {
		seen[fix] = true
		if ran(f, fix, bad.Scenario) {
			continue // measured here and not good enough: look further
		}
		return fmt.Sprintf("Use %s (idle backend connections kept in a pool at least as large as the concurrency).", fix)
	}
	return "Keep backend connections alive in a pool at least as large as the concurrency."
}

// heldUp reports whether profile ran scenario without failures and with
// reused backend connections, and its connections per request.
func heldUp(f *results.File, profile, scenario string) (bool, float64) {
	var reqs, conns, fails uint64
	for _, u := range f.Units {
		if !reportable(u) || u.Profile != profile || u.Scenario != scenario {
			continue
		}
		for _, st := range u.Steps {
			if st.Result == nil || !st.Backend.Valid {
				continue
			}
			reqs += st.Backend.Requests
			conns += st.Backend.Accepted
			fails += seriesFailures(st.Result.Seconds)
		}
	}
	if reqs == 0 {
		return false, -1
	}
	cpr := float64(conns) / float64(reqs)
	return fails == 0 && cpr <= reusedPerReq, cpr
}

// ran reports whether profile has results for scenario.
func ran(f *results.File, profile, scenario string) bool {
	for _, u := range f.Units {
		if reportable(u) && u.Profile == profile && u.Scenario == scenario {
			return true
		}
	}
	return false
}

// workFailCycles: a run that alternates between working and failing
// stretches (TIME_WAIT sockets expire after 60 s and the ports come back).
func workFailCycles(f *results.File) []string {
	var out []string
	eachStep(f, func(u *results.Unit, st *results.Step) {
		ph := phases(st.Result.Seconds, cycleMinSeconds)
		var works, fails []int
		for _, p := range ph {
			if p.failing {
				fails = append(fails, p.end-p.start)
			} else {
				works = append(works, p.end-p.start)
			}
		}
		// at least work -> fail -> work
		if len(fails) < 1 || len(works) < 2 || ph[0].failing {
			return
		}
		out = append(out, fmt.Sprintf("%s (%s) works and fails in turns: working stretches of %s s, failing stretches of %s s over %d s, as ports held in TIME_WAIT expire and are used up again.",
			u.Profile, stepName(u, st), joinInts(works), joinInts(fails), len(st.Result.Seconds)))
	})
	return out
}

// connChurn: a closed-loop run that slowed down while TIME_WAIT in the
// proxy's namespace grew, with new backend connections for all requests
// (no pool) or some of them (an idle pool smaller than the concurrency).
// Runs the port-exhaustion finding already explains are left out.
func connChurn(f *results.File, explained map[*results.Step]bool) []string {
	ports := f.Machine.Ports()
	var out []string
	eachStep(f, func(u *results.Unit, st *results.Step) {
		if st.Rate != 0 || explained[st] {
			return
		}
		ps := st.Result.Seconds
		n := len(ps)
		if n < 9 {
			return
		}
		first, last := okRate(ps, ps[0].T, ps[n/3].T), okRate(ps, ps[n-n/3].T, ps[n-1].T+1)
		tw := maxTimeWait(st.Proxy)
		cpr := st.Backend.ConnsPerRequest()
		if first == 0 || last >= slowdownRatio*first || tw <= 0 || cpr <= 0.02 {
			return
		}
		if ports > 0 && float64(tw) < leakShare*float64(ports) {
			return
		}
		s := fmt.Sprintf("%s (%s): throughput fell from %s/s in the first third to %s/s in the last third while TIME_WAIT in its namespace rose to %s",
			u.Profile, stepName(u, st), fmtRate(first), fmtRate(last), fmtInt(int64(tw)))
		if ports > 0 {
			s += fmt.Sprintf(" (%.0f%% of the %s-port range)", 100*float64(tw)/float64(ports), fmtInt(int64(ports)))
		}
		if cpr >= newConnPerReq {
			s += fmt.Sprintf("; the backend accepted %.2f new connections per request: the proxy opens a new backend connection per request, its local ports pile up in TIME_WAIT for 60 s and new connections get slower, then fail", cpr)
			if ports > 0 {
				s += fmt.Sprintf(" (%s ports / 60 s: at most about %s new connections per second can last)", fmtInt(int64(ports)), fmtInt(int64(ports/60)))
			}
			out = append(out, s+". "+fixFor(f, u))
			return
		}
		s += fmt.Sprintf("; the backend accepted %.2f new connections per request at %d connections: the proxy keeps fewer idle backend connections than the concurrency and closes the rest after each request.", cpr, st.Connections)
		explained[st] = true
		out = append(out, s+" "+fixFor(f, u))
	})
	return out
}

// poolLeak: a closed-loop run in which the proxy reused some backend
// connections but not all (an idle pool smaller than the concurrency:
// seed 003's 32 per host or worker at 100 connections), so closed
// connections piled up in TIME_WAIT in its namespace, set beside a
// profile of the same proxy that reused them all in the same scenario.
// Runs another finding explains are left out.
func poolLeak(f *results.File, explained map[*results.Step]bool) []string {
	ports := f.Machine.Ports()
	var out []string
	done := map[string]bool{}
	eachStep(f, func(u *results.Unit, st *results.Step) {
		if st.Rate != 0 || explained[st] || done[u.Profile+"/"+u.Scenario] {
			return
		}
		cpr, tw := st.Backend.ConnsPerRequest(), maxTimeWait(st.Proxy)
		if cpr <= 0.02 || cpr >= newConnPerReq || tw < leakMinTimeWait {
			return
		}
		done[u.Profile+"/"+u.Scenario] = true
		s := fmt.Sprintf("%s (%s, %d connections): the backend accepted %.2f new connections per request and TIME_WAIT in the proxy's namespace rose to %s", u.Profile, stepName(u, st), st.Connections, cpr, fmtInt(int64(tw)))
		if ports > 0 {
			s += fmt.Sprintf(" (%.0f%% of the %s-port range)", 100*float64(tw)/float64(ports), fmtInt(int64(ports)))
		}
		s += ": it keeps fewer idle backend connections than the concurrency and closes the rest after each request, and every closed one holds a port for 60 s."
		if v, vcpr, vtw, ok := sameProxyReused(f, u); ok {
			s += fmt.Sprintf(" %s in the same scenario: %.2f new connections per request, TIME_WAIT at most %s.", v, vcpr, fmtInt(int64(vtw)))
		} else {
			s += " " + fixFor(f, u)
		}
		out = append(out, s)
	})
	return out
}

// sameProxyReused finds another profile of bad's proxy that ran bad's
// scenario reusing its backend connections (at most reusedPerReq new ones
// per request): its name, connections per request and TIME_WAIT peak.
func sameProxyReused(f *results.File, bad *results.Unit) (string, float64, int, bool) {
	for _, u := range f.Units {
		if !reportable(u) || u.Proxy != bad.Proxy || u.Profile == bad.Profile || u.Scenario != bad.Scenario {
			continue
		}
		if ok, cpr := heldUp(f, u.Profile, u.Scenario); ok {
			tw := 0
			for _, st := range u.Steps {
				tw = max(tw, maxTimeWait(st.Proxy))
			}
			return u.Profile, cpr, tw, true
		}
	}
	return "", 0, 0, false
}

// portsAccount accounts for the ports before a cliff: the requests the
// backend had served through the proxy before the step (the lab's own
// readiness and idle-memory requests and earlier steps in the same
// namespaces; none in fresh ones) each held a port too, so they and the
// 2xx before the first failure add up to the range less one (seed 003's
// 28,231 of 28,232).
func portsAccount(st *results.Step, ok uint64, ports int) string {
	if !st.StartChecked || ports <= 0 {
		return ""
	}
	before := st.BackendReqsBefore
	where := "the step started in fresh network namespaces"
	if st.RenewS == 0 {
		where = "the step started in the namespace earlier runs used"
	}
	s := fmt.Sprintf("; %s with %s sockets in TIME_WAIT and %s earlier requests through the proxy (the lab's own readiness and idle-memory probes, earlier steps)", where, fmtInt(int64(st.StartTimeWait)), fmtInt(int64(before)))
	if used := ok + before; used+1 >= uint64(ports)*9/10 && used < uint64(ports)+uint64(ports)/10 {
		s += fmt.Sprintf(": %s + %s = %s, the %s-port range less %s", fmtInt(int64(ok)), fmtInt(int64(before)), fmtInt(int64(used)), fmtInt(int64(ports)), fmtInt(int64(ports)-int64(used)))
	}
	return s
}
