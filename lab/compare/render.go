package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/loadlab/loadlab/internal/units"
)

// metricTitle names a metric in tables.
func metricTitle(m Metric) string {
	switch m {
	case Rate:
		return "2xx/s"
	case CPU:
		return "proxy CPU"
	case Mem:
		return "memory"
	}
	return string(m)
}

// fmtValue writes a value of metric m.
func fmtValue(m Metric, v float64) string {
	switch m {
	case Rate:
		return units.Rate(v)
	case P50, P99, P999:
		return units.Micros(int64(math.Round(v)))
	case Errors:
		if v != 0 && math.Abs(v) < 0.0001 {
			return fmt.Sprintf("%.2g%%", 100*v)
		}
		return fmt.Sprintf("%.2f%%", 100*v)
	case CPU:
		return fmt.Sprintf("%.2f cores", v)
	case Mem:
		return units.Bytes(uint64(max(v, 0)))
	}
	return fmt.Sprint(v)
}

func (r Result) cells() []string {
	ratio, ci := "-", "-"
	if r.Verdict == NoData {
		return []string{metricTitle(r.Metric), dash(r.RunsA, r.Metric, r.A), dash(r.RunsB, r.Metric, r.B), ratio, ci, r.Verdict, r.BasisWords}
	}
	switch {
	case r.Ratio != nil:
		ratio = fmt.Sprintf("%.3f", *r.Ratio)
	case r.B > r.A:
		ratio = "+∞"
	}
	if r.RatioLo != nil && r.RatioHi != nil {
		ci = fmt.Sprintf("%.3f–%.3f", *r.RatioLo, *r.RatioHi)
	}
	return []string{metricTitle(r.Metric), fmtValue(r.Metric, r.A), fmtValue(r.Metric, r.B), ratio, ci, r.Verdict, r.BasisWords}
}

func dash(n int, m Metric, v float64) string {
	if n == 0 {
		return "-"
	}
	return fmtValue(m, v)
}

var header = []string{"metric", "A", "B", "B/A", "95% CI", "verdict", "basis"}

// sideWords says what a side held.
func sideWords(s SideInfo) string {
	n := len(s.Inputs)
	what := "gen result"
	if s.Kind == KindLab {
		what = "lab results"
	}
	if n == 1 {
		return fmt.Sprintf("%s (%s)", s.Arg, what)
	}
	return fmt.Sprintf("%s (%s, %d repeated runs)", s.Arg, what, n)
}

// basisNote explains the bases the report used, in one paragraph.
func (rep *Report) basisNote() string {
	used := map[string]bool{}
	for _, row := range rep.Rows {
		for _, m := range row.Metrics {
			used[m.Basis] = true
		}
	}
	var parts []string
	if used[BasisRuns] {
		parts = append(parts, fmt.Sprintf("with 4 or more runs a side, a Mann-Whitney U test over the runs' values (different when p < %g) and the ratio's interval from the runs", rep.Alpha))
	}
	if used[BasisPerSecond] {
		parts = append(parts, fmt.Sprintf("with fewer runs, the U test over the runs' per-second values, and a difference must also exceed the floor of ±%s: one run's seconds understate the run-to-run noise (10–20%% on a small machine), so the interval shown is narrower than the truth", pct(rep.Floor)))
	}
	if used[BasisValues] {
		parts = append(parts, "a search's rate found has no per-second data and no test: tied when the searches' brackets overlap (last pass to first fail, wider where a search's steps disagreed); its latency, errors, CPU and memory, taken at that boundary, are shown, not judged")
	}
	if len(parts) == 0 {
		return ""
	}
	note := "Basis: " + strings.Join(parts, "; ") + "."
	if used[BasisRuns] || used[BasisPerSecond] {
		note += fmt.Sprintf(" The tests' p are Holm-corrected across each row's tested metrics (different when the corrected p < %g), so that two runs of one server are called different on some metric of a row about %g of the time at most", rep.Alpha, rep.Alpha)
		if rep.A.Kind == KindLab {
			note += "; the summary corrects across every test of the comparison"
		}
		note += "."
	}
	return note
}

// WriteText writes the comparison as aligned text.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n", sideWords(rep.A), sideWords(rep.B))
	if n := rep.basisNote(); n != "" {
		fmt.Fprintf(&b, "%s\n", n)
	}
	for _, row := range rep.Rows {
		b.WriteString("\n")
		if rep.A.Kind == KindLab {
			fmt.Fprintf(&b, "%s", row.Key)
			if row.Method != "" {
				fmt.Fprintf(&b, " (%s)", row.Method)
			}
			b.WriteString("\n")
		}
		if row.Only != "" {
			fmt.Fprintf(&b, "  only in %s\n", row.Only)
			continue
		}
		for _, d := range row.Ran {
			fmt.Fprintf(&b, "  what ran: %s\n", d)
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  %s\n", strings.Join(header, "\t"))
		for _, m := range row.Metrics {
			fmt.Fprintf(tw, "  %s\n", strings.Join(m.cells(), "\t"))
		}
		tw.Flush()
	}
	b.WriteString("\n" + rep.summaryText())
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryText is the closing lines: how many rows were within noise,
// every difference with its ratio and interval, and the --fail-if checks.
func (rep *Report) summaryText() string {
	var b strings.Builder
	compared, quiet, only := rep.Summary()
	if rep.A.Kind == KindLab {
		fmt.Fprintf(&b, "%d rows compared: %d within noise on every metric, %d with a difference", compared, quiet, compared-quiet)
		if only > 0 {
			fmt.Fprintf(&b, "; %d only on one side", only)
		}
		b.WriteString(".\n")
		if rep.Tests > 0 {
			fmt.Fprintf(&b, "The summary's family: all %d tests of the comparison, Holm-corrected (each row's verdicts: its own tests)", rep.Tests)
			if n := rep.dropped(); n > 0 {
				fmt.Fprintf(&b, "; %d difference(s) in the rows' verdicts do not survive it", n)
			}
			b.WriteString(".\n")
		}
	}
	var ran []string
	for _, row := range rep.Rows {
		if len(row.Ran) > 0 {
			ran = append(ran, row.Key+": "+strings.Join(row.Ran, "; "))
		}
	}
	if len(ran) > 0 {
		b.WriteString("Not the same setup (what ran differs, so a difference may be the config's or the binary's):\n")
		for _, r := range ran {
			fmt.Fprintf(&b, "  %s\n", r)
		}
	}
	diffs := rep.Different()
	if len(diffs) == 0 {
		b.WriteString("No difference beyond the noise.\n")
	} else {
		b.WriteString("Different:\n")
		for _, d := range diffs {
			fmt.Fprintf(&b, "  %s\n", d.words(rep.A.Kind == KindLab))
		}
	}
	for _, c := range rep.Checks {
		if c.Failed {
			fmt.Fprintf(&b, "--fail-if %s: FAILED (%s)\n", c.Rule, strings.Join(c.Rows, "; "))
		} else {
			fmt.Fprintf(&b, "--fail-if %s: passed\n", c.Rule)
		}
	}
	return b.String()
}

// Diff is one metric of one row the comparison calls different.
type Diff struct {
	Row string
	Result
}

// words writes the difference in one line.
func (d Diff) words(withRow bool) string {
	c := d.cells()
	s := fmt.Sprintf("%s %s: %s → %s, ratio %s", c[0], d.Verdict, c[1], c[2], c[3])
	if c[4] != "-" {
		s += " (95% CI " + c[4] + ")"
	}
	if d.BoundLo != nil && d.BoundHi != nil {
		s += fmt.Sprintf(" (the searches' brackets allow %.3f–%.3f)", *d.BoundLo, *d.BoundHi)
	}
	if withRow {
		s = d.Row + ": " + s
	}
	return s
}

// Different lists every metric of every row the comparison calls
// different, row by row: the summary's, a tested one only when it survives
// Holm across every test of the comparison (DifferentAll).
func (rep *Report) Different() []Diff {
	var out []Diff
	for _, row := range rep.Rows {
		for _, m := range row.Different() {
			if m.DifferentAll {
				out = append(out, Diff{row.Key, m})
			}
		}
	}
	return out
}

// dropped counts the rows' differences that do not survive Holm across
// the comparison.
func (rep *Report) dropped() int {
	n := 0
	for _, row := range rep.Rows {
		for _, m := range row.Different() {
			if !m.DifferentAll {
				n++
			}
		}
	}
	return n
}

// WriteMarkdown writes the comparison as Markdown.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## loadlab compare\n\n- A: %s\n- B: %s\n\n", mdEscape(sideWords(rep.A)), mdEscape(sideWords(rep.B)))
	if n := rep.basisNote(); n != "" {
		fmt.Fprintf(&b, "%s\n\n", n)
	}
	lab := rep.A.Kind == KindLab
	h := header
	if lab {
		h = append([]string{"row"}, header...)
	}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(h, " | "), strings.Repeat("---|", len(h)))
	for _, row := range rep.Rows {
		if row.Only != "" {
			cells := []string{"-", "-", "-", "-", "-", "only in " + row.Only, ""}
			if lab {
				cells = append([]string{row.Key}, cells...)
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(mdCells(cells), " | "))
			continue
		}
		for i, m := range row.Metrics {
			cells := m.cells()
			if m.Different {
				cells[5] = "**" + cells[5] + "**"
			}
			if i == 0 && len(row.Ran) > 0 {
				cells[len(cells)-1] = strings.TrimSpace(cells[len(cells)-1] + " what ran: " + strings.Join(row.Ran, "; "))
			}
			if lab {
				cells = append([]string{row.Key}, cells...)
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(mdCells(cells), " | "))
		}
	}
	b.WriteString("\n")
	inList := false
	for _, line := range strings.Split(strings.TrimRight(rep.summaryText(), "\n"), "\n") {
		item := strings.HasPrefix(line, "  ")
		switch {
		case item:
			line = "- " + strings.TrimSpace(line)
		case inList:
			line = "\n" + line + "\n" // a paragraph after the list
		default:
			line += "\n"
		}
		inList = item
		b.WriteString(mdEscape(line) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdEscape(c)
	}
	return out
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteJSON writes the comparison as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
