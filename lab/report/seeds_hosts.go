package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/spread"
)

// Seed 001's rows of the seeds table (hosts.go has its section). Each
// cites one number per profile (plan.Seed Numbers and Values, in the
// order of its profiles: Caddy, Traefik, NPM as the plan maps them) and
// sets this run's beside it. A level (idle memory) reproduces within
// seedLevelFactor of each profile's; an order (rate, p99, config lines)
// reproduces when this run's profiles come in the seed's order and every
// neighbour in it is apart beyond the run's noise (the rankings' rule).

// hostsUnit is the first reportable unit of s's scenarios on profile.
func hostsUnit(f *results.File, s plan.Seed, profile string) *results.Unit {
	if us := seedUnits(f, s, profile); len(us) > 0 {
		return us[0]
	}
	return nil
}

// perProfile is one profile's number in a seed-001 row.
type perProfile struct {
	profile string
	v       float64 // the quantity compared (MiB, 2xx/s, ms, lines)
	words   string  // this run's number as the row prints it
	r       row     // the row, for the noise rule (rate, p99)
	vals    []float64
	ok      bool
}

// sizes says each profile's value against the seed's: "caddy-stock
// 1.12x, nginx-npm 0.31x the seed's".
func sizes(s plan.Seed, ps []perProfile) string {
	var out []string
	for _, p := range ps {
		if sv := s.ProfileValue(p.profile); p.ok && sv > 0 && p.v > 0 {
			out = append(out, fmt.Sprintf("%s %.2fx", p.profile, p.v/sv))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, ", ") + " the seed's"
}

// runWords joins each profile's words: "caddy-stock 12.1 MiB; nginx-npm ...".
func runWords(ps []perProfile) string {
	var out []string
	for _, p := range ps {
		w := p.words
		if !p.ok {
			w = "-"
		}
		out = append(out, p.profile+": "+w)
	}
	return strings.Join(out, "; ")
}

// measured counts the profiles measured.
func measured(ps []perProfile) int {
	n := 0
	for _, p := range ps {
		if p.ok {
			n++
		}
	}
	return n
}

// hostsIdleSeed: idle memory with the hosts scenario's routes, each
// profile's memory.current (what the seed's 2 GiB cap charged) against
// its cited level.
func hostsIdleSeed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	yes := true
	for _, name := range s.Profiles {
		p := perProfile{profile: name}
		if u := hostsUnit(f, s, name); u != nil {
			if pi := idleOf(f, u); pi != nil && pi.Error == "" && pi.IdleMemory > 0 {
				p.v = float64(pi.IdleMemory) / (1 << 20)
				p.words = fmt.Sprintf("%.1f MiB with %d routes (anon+kernel %s)", p.v, pi.Routes, fmtMiB(pi.IdleNeed))
				p.ok = true
			}
		}
		if sv := s.ProfileValue(name); p.ok && sv > 0 && (p.v > sv*seedLevelFactor || p.v*seedLevelFactor < sv) {
			yes = false
		}
		ps = append(ps, p)
	}
	if measured(ps) == 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	return seedOutcome{run: runWords(ps), reproduced: yesNo(yes), size: sizes(s, ps)}
}

// hostsRateSeed: the middle run's 2xx/s per profile; reproduced when the
// profiles come in the seed's order by rate, each apart from the next
// beyond the noise (rowsTied), as the rankings say.
func hostsRateSeed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	for _, name := range s.Profiles {
		p := perProfile{profile: name}
		if u := hostsUnit(f, s, name); u != nil {
			if rows := rowsOf(f, u); len(rows) == 1 && rows[0].rate > 0 {
				p.r, p.v, p.ok = rows[0], rows[0].rate, true
				p.words = rows[0].valueText() + " 2xx/s"
				if n := rows[0].left(); n != "" {
					p.words += " (" + n + ")"
				}
			}
		}
		ps = append(ps, p)
	}
	return orderOutcome(s, ps, true, func(a, b perProfile) bool { return rowsTied != nil && rowsTied(a.r, b.r) })
}

// hostsP99Seed: the p99 of each profile's middle run; reproduced when
// they come in the seed's order (lowest first), each apart from the next
// beyond the noise of their runs' p99s.
func hostsP99Seed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	for _, name := range s.Profiles {
		p := perProfile{profile: name}
		if u := hostsUnit(f, s, name); u != nil {
			if rows := rowsOf(f, u); len(rows) == 1 {
				if h, ok := runOf(rows[0]); ok && h.p99 > 0 {
					p.r, p.v, p.ok = rows[0], float64(h.p99)/1000, true
					p.words = fmtLatency(h.p99)
					for _, o := range hostsRuns(u) {
						p.vals = append(p.vals, float64(o.p99))
					}
					if n := rows[0].left(); n != "" {
						p.words += " (" + n + ")"
					}
				}
			}
		}
		ps = append(ps, p)
	}
	return orderOutcome(s, ps, false, func(a, b perProfile) bool { return spread.Tied(a.vals, b.vals, noiseFloor) })
}

// orderOutcome judges an order: the profiles by the seed's values
// (highest first, or lowest with !high), and this run's values in the
// same order, each neighbour apart (tied: within the noise). Rows left
// out of rankings (generator-limited, died) are not judged.
func orderOutcome(s plan.Seed, ps []perProfile, high bool, tied func(a, b perProfile) bool) seedOutcome {
	var judged []perProfile
	for _, p := range ps {
		if p.ok && s.ProfileValue(p.profile) > 0 && p.r.ranked() {
			judged = append(judged, p)
		}
	}
	o := seedOutcome{run: runWords(ps), reproduced: seedNotMeasured, size: sizes(s, ps)}
	if len(judged) < 2 {
		return o
	}
	sort.SliceStable(judged, func(i, j int) bool {
		a, b := s.ProfileValue(judged[i].profile), s.ProfileValue(judged[j].profile)
		if high {
			return a > b
		}
		return a < b
	})
	var why []string
	for i := 1; i < len(judged); i++ {
		a, b := judged[i-1], judged[i]
		before := a.v > b.v
		if !high {
			before = a.v < b.v
		}
		switch {
		case !before:
			why = append(why, fmt.Sprintf("%s is not %s %s here", a.profile, map[bool]string{true: "above", false: "below"}[high], b.profile))
		case tied(a, b):
			why = append(why, fmt.Sprintf("%s and %s are within this run's noise", a.profile, b.profile))
		}
	}
	o.reproduced = yesNo(len(why) == 0)
	if len(why) > 0 {
		o.run += " (" + strings.Join(why, "; ") + ")"
	}
	return o
}

// hosts502Seed: the first profile (nginx-npm, NPM's generated shape)
// answers 502s from port exhaustion, its log saying "Cannot assign
// requested address", while the second (caddy-stock) answers no 502.
func hosts502Seed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	for _, name := range s.Profiles {
		p := perProfile{profile: name}
		if u := hostsUnit(f, s, name); u != nil && len(hostsRuns(u)) > 0 {
			p.ok, p.words = true, n502Words(u)+" 502"
			for _, h := range hostsRuns(u) {
				p.v += float64(h.n502)
				p.vals = append(p.vals, float64(h.addr))
			}
		}
		ps = append(ps, p)
	}
	if len(ps) < 2 || !ps[0].ok || !ps[1].ok {
		return seedOutcome{run: runWords(ps), reproduced: seedNotMeasured}
	}
	addr := 0.0
	for _, a := range ps[0].vals {
		addr += a
	}
	return seedOutcome{run: runWords(ps), reproduced: yesNo(ps[0].v > 0 && addr > 0 && ps[1].v == 0)}
}

// configLinesSeed: each profile's config for five host names, counted by
// its lines neither blank nor a comment; reproduced when the profiles
// come in the seed's order (fewest first). A count is exact: no noise.
func configLinesSeed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	for _, name := range s.Profiles {
		p := perProfile{profile: name, r: row{profile: name}}
		if c := f.ConfigSize(name); c != nil && c.Error == "" && c.Lines > 0 {
			p.v, p.ok, p.words = float64(c.Lines), true, configLinesWords(f, name)
		}
		ps = append(ps, p)
	}
	return orderOutcome(s, ps, false, func(a, b perProfile) bool { return a.v == b.v })
}

// h3BuildSeed: whether each profile served HTTP/3 here (its checks: a
// body over HTTP/3, Alt-Svc naming h3), against the seed's (values: 1 on,
// 0 off).
func h3BuildSeed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	yes := true
	for i, name := range s.Profiles {
		p := perProfile{profile: name}
		if served, adv, ok := h3Served(f, name); ok {
			p.ok, p.words = true, h3Words(f, name)
			on := served && adv
			if i < len(s.Values) && on != (s.Values[i] > 0) {
				yes = false
			}
		}
		ps = append(ps, p)
	}
	if measured(ps) == 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	return seedOutcome{run: runWords(ps), reproduced: yesNo(yes)}
}

// restartSeed: each profile answered again after a restart with its
// certificate unchanged (the checks' restart); the size is the time
// against the seed's seconds (a docker restart there, a process here).
func restartSeed(f *results.File, s plan.Seed) seedOutcome {
	var ps []perProfile
	yes := true
	for _, name := range s.Profiles {
		p := perProfile{profile: name}
		for _, c := range f.Checks {
			if c.Profile == name && c.Restarted {
				p.ok, p.v, p.words = true, c.RestartS, restartWords(f, name)
				yes = yes && c.CertUnchanged && c.RestartS > 0
				break
			}
		}
		ps = append(ps, p)
	}
	if measured(ps) == 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	return seedOutcome{run: runWords(ps), reproduced: yesNo(yes), size: sizes(s, ps)}
}
