package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// Which part limited a row (the lab records it per step and, for a search,
// per unit: results.LimitOf), the rows the backend capped, and the
// generator's lag caveats.

// limitRow fills r's limitedBy from the record: a search row reads its
// unit's (the first failed step above the rate found), falling back to its
// own step's; other rows read their step's.
func limitRow(r *row) {
	if r.unit != nil && r.unit.Method == plan.MethodSearch && r.unit.LimitedBy != "" {
		r.limitedBy, r.limitedWhy = r.unit.LimitedBy, r.unit.LimitedWhy
		return
	}
	if r.step != nil {
		r.limitedBy, r.limitedWhy = r.step.LimitedBy, r.step.LimitedWhy
	}
}

// backendCapped marks rows the backend limited: the proxy's number is the
// backend's ceiling, so it is ranked with a note, not left out.
func backendCapped(r *row) (mark, bool) {
	return mark{note: "capped by the backend"}, r.limitedBy == results.LimitBackend
}

// limitHeader is the column every scenario table has.
const limitHeader = "Limited by"

// limitCell is the row's "Limited by" cell.
func limitCell(r row) string { return orDash(r.limitedBy) }

// backendHeader is the backend's CPU column.
const backendHeader = "Backend CPU"

// backendCell is the backend's CPU in the row's step.
func backendCell(r row) string {
	if r.step == nil || r.step.BackendSum.Samples == 0 {
		return "-"
	}
	return fmtCores(r.step.BackendSum.CPUAvg, r.step.BackendSum.Samples)
}

// limitLegend says what the Limited by column is (Report.Legend).
const limitLegend = "Limited by: the part that limited the row's step (a search: the first failed step above the rate found), the first that holds of generator (its self-check), ports (the proxy logged \"Cannot assign requested address\", the generator counted addr_not_avail, or TIME_WAIT filled 80% of the port range), backend and proxy (busy at 90% of their CPUs or quota over the measured window, or throttled in 20% of the quota's periods); none: no part saturated, the limit was latency or errors."

// limitFootnotes say why each row is limited by what its column says
// (the generator's reasons have their own † footnotes).
func limitFootnotes(rows []row) []string {
	var out []string
	for _, r := range rows {
		if r.limitedWhy == "" || r.limitedBy == results.LimitGenerator {
			continue
		}
		out = append(out, fmt.Sprintf("Limited by %s, %s: %s.", r.limitedBy, r.label(true), r.limitedWhy))
	}
	return out
}

// lagCaveat is the row's caveat on the quantiles above the ones it
// reports ("" when none): the generator's send lag was material there.
func lagCaveat(r row) string {
	if r.step == nil || r.step.Result == nil {
		return ""
	}
	var parts []string
	for _, c := range r.step.Result.Generator.LagCaveats {
		parts = append(parts, fmt.Sprintf("%s includes %s of send lag (%.0f%%)", c.Quantile, fmtLatency(c.LagUs), 100*c.Share))
	}
	return strings.Join(parts, ", ")
}

// caveatFootnotes list the rows whose higher quantiles carry the
// generator's lag.
func caveatFootnotes(rows []row) []string {
	var out []string
	for _, r := range rows {
		if c := lagCaveat(r); c != "" {
			out = append(out, fmt.Sprintf("Caveat, %s: the generator's %s; p50 to p99 are not affected, so the row is not generator-limited.", r.label(true), c))
		}
	}
	return out
}
