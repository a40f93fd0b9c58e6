package report

import (
	"fmt"
	"sort"
	"strings"
)

// This file is the one place that decides how a row is marked and which rows
// a ranking leaves out or ties. Work that adds a reason to mark a row (the
// generator was the bottleneck, the backend capped the proxy, the proxy
// died) adds a markRule to markRules; work that decides when two rows cannot
// be told apart sets rowsTied. Tables, charts and rankings only read marks.

// markRules are applied in order; a row may carry several marks.
// A died proxy or backend comes first: that is what the row's note says
// when it also carries another mark.
var markRules = []markRule{proxyDied, backendDied, generatorLimited, backendCapped}

// generatorLimited marks rows where the generator's self-check reported
// itself as the bottleneck: the number is the generator's, not the proxy's.
func generatorLimited(r *row) (mark, bool) {
	return mark{sym: "†", note: "generator-limited", leave: true}, r.genLim
}

// proxyDied marks rows whose unit had its proxy die in a step (it exited,
// was killed, or had a process OOM-killed): the search ended there, and
// its numbers are those of a dead server (findings_faults.go says how).
func proxyDied(r *row) (mark, bool) {
	return mark{sym: "✗", note: "proxy died", leave: true}, r.unit != nil && firstDeath(r.unit, proxyExitOf) != nil
}

// backendDied marks rows whose unit had the backend die in a step.
func backendDied(r *row) (mark, bool) {
	return mark{sym: "✗", note: "backend died", leave: true}, r.unit != nil && firstDeath(r.unit, backendExitOf) != nil
}

// markRow applies markRules to r, once, after the row's fields are filled.
func markRow(r *row) {
	r.marks = r.marks[:0]
	for _, rule := range markRules {
		if m, ok := rule(r); ok {
			r.marks = append(r.marks, m)
		}
	}
}

// markRows applies markRules to every row.
func markRows(rows []row) {
	for i := range rows {
		markRow(&rows[i])
	}
}

// syms is the row's mark symbols, space-separated, "" when it has none.
func (r row) syms() string {
	var s []string
	for _, m := range r.marks {
		if m.sym != "" && !contains(s, m.sym) {
			s = append(s, m.sym)
		}
	}
	return strings.Join(s, " ")
}

// left is the note of the first mark that leaves r out of rankings, "" when
// r is ranked.
func (r row) left() string {
	for _, m := range r.marks {
		if m.leave {
			return m.note
		}
	}
	return ""
}

// ranked reports whether r takes part in rankings.
func (r row) ranked() bool { return r.left() == "" }

// marked is r's label with its mark symbols.
func (r row) marked(withKey bool) string {
	if s := r.syms(); s != "" {
		return r.label(withKey) + " " + s
	}
	return r.label(withKey)
}

// rowsTied reports whether rows a and b (a ranked at or above b) cannot be
// told apart; tied rows share a place in the ranking. Nil: never tied.
var rowsTied func(a, b row) bool = noiseTied

// ranking orders the rows no mark leaves out by rate, best first. Rows a
// mark leaves out are listed after it, grouped by the mark's note; notes of
// marks that do not leave a row out follow its rate.
func ranking(rows []row, withKey bool, what string) string {
	var ok []row
	var leftNotes []string
	leftOut := map[string][]string{}
	for _, r := range rows {
		if n := r.left(); n != "" {
			if _, seen := leftOut[n]; !seen {
				leftNotes = append(leftNotes, n)
			}
			leftOut[n] = append(leftOut[n], r.label(withKey))
			continue
		}
		if r.rate > 0 && r.rateText == "" {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return ""
	}
	sort.SliceStable(ok, func(i, j int) bool {
		if ok[i].lower {
			return ok[i].rate < ok[j].rate
		}
		return ok[i].rate > ok[j].rate
	})
	var parts []string
	place := 1
	for i, r := range ok {
		tied := i > 0 && rowsTied != nil && rowsTied(ok[i-1], r)
		if !tied {
			place = i + 1
		}
		p := fmt.Sprintf("%d.", place)
		if tied || (i+1 < len(ok) && rowsTied != nil && rowsTied(r, ok[i+1])) {
			p = fmt.Sprintf("=%d.", place)
		}
		s := fmt.Sprintf("%s %s %s", p, r.label(withKey), r.rankText())
		if tied {
			s += sameRoundText(ok[i-1], r)
		}
		var notes []string
		for _, m := range r.marks {
			if m.note != "" {
				notes = append(notes, m.note)
			}
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, ", ") + ")"
		}
		parts = append(parts, s)
	}
	s := "Ranking by " + what + ": " + strings.Join(parts, ", ")
	for _, n := range leftNotes {
		s += " (left out, " + n + ": " + strings.Join(leftOut[n], ", ") + ")"
	}
	if len(ok) > 1 {
		if n := tieNote(ok); n != "" {
			s += ". " + upperFirst(n)
		}
	}
	return s
}
