package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/loadlab/loadlab/lab/compare"
	"github.com/spf13/cobra"
)

type compareFlags struct {
	failIf   string
	jsonOut  string
	markdown bool
	format   string
	floor    float64
	quiet    bool
}

// newCompareCmd builds `loadlab compare`.
func newCompareCmd() *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare [flags] A B",
		Short: "Say whether B differs from A beyond the noise: gen results, lab results, or sets of repeated runs",
		Long: `compare puts B beside A, row by row and metric by metric (2xx/s, p50, p99,
p99.9, errors, and in lab results proxy CPU and memory): both values, the
ratio B/A with its 95% confidence interval, and a verdict: faster, slower
(higher, lower for errors, CPU and memory) or "within noise".

A and B are each a gen result (gen --json; several results in one file are
the shards of one run and are merged), an HdrHistogram log (gen --hdr-log;
latency only), a lab results directory (lab run --out), or a comma-separated
list of them: repeated runs of the same thing (A1.json,A2.json,A3.json).
Lab rows are matched by unit (scenario/profile/key/layout, and rate for
fixed-rate runs); a lab scenario's own runs count as repeated runs.

How a difference is decided, and said per metric:
  4 or more runs a side   Mann-Whitney U test over the runs' values, p < 0.05
  fewer runs              U test over the runs' per-second values, and the
                          change must exceed the floor (--floor, 10%): one
                          run's seconds understate run-to-run noise, which
                          is 10-20% on a small machine; 2-3 runs a side whose
                          ranges overlap are within noise
  a search's rate found   no per-second values: different only beyond the
                          search's precision

--fail-if checks rules after the comparison and exits 3 when one finds a
real regression: the comparison calls the metric different (significant
and beyond the floor) and its change is past the rule's threshold, e.g.
'p99>+10%,rate<-5%'. Metrics: rate, p50, p99, p99.9, errors, cpu, mem.

Exit status: 0, or 3 when a --fail-if rule fired; 2 for bad input.`,
		Example: `  loadlab compare before.json after.json
  loadlab compare a1.json,a2.json,a3.json,a4.json b1.json,b2.json,b3.json,b4.json
  loadlab compare results/quick-monday results/quick-tuesday --markdown
  loadlab compare base.json pr.json --fail-if 'p99>+10%,rate<-5%' --json verdict.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("compare needs two arguments, A and B (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.failIf, "fail-if", "", "exit 3 when a rule finds a real regression, e.g. 'p99>+10%,rate<-5%'")
	fl.StringVar(&f.jsonOut, "json", "", "write the comparison as JSON to FILE (- = stdout)")
	fl.BoolVar(&f.markdown, "markdown", false, "write Markdown instead of text (same as --format markdown)")
	fl.StringVar(&f.format, "format", "text", "output: text, markdown or json")
	fl.Float64Var(&f.floor, "floor", compare.DefaultFloor, "the change a difference found in per-second values must exceed (0.1 = ±10%)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no output; only the exit status (and --json)")
	return cmd
}

func runCompare(cmd *cobra.Command, f *compareFlags, argA, argB string) error {
	format := f.format
	switch {
	case f.markdown && cmd.Flags().Changed("format") && format != "markdown":
		return usagef("--markdown and --format %s: choose one", format)
	case f.markdown:
		format = "markdown"
	}
	switch format {
	case "text", "markdown", "json":
	default:
		return usagef("--format %q: use text, markdown or json", format)
	}
	if f.floor <= 0 || f.floor >= 10 {
		return usagef("--floor %g: want a share above 0, such as 0.1 for ±10%%", f.floor)
	}
	var rules []compare.Rule
	if cmd.Flags().Changed("fail-if") {
		var err error
		if rules, err = compare.ParseRules(f.failIf); err != nil {
			return usageError{err}
		}
	}
	a, err := compare.Load(argA)
	if err != nil {
		return compareErr("A", err)
	}
	b, err := compare.Load(argB)
	if err != nil {
		return compareErr("B", err)
	}
	rep, err := compare.Compare(a, b, compare.Options{Floor: f.floor})
	if err != nil {
		return compareErr("", err)
	}
	rep.Check(rules)

	jsonW, closeJSON, err := openOut(f.jsonOut, cmd.OutOrStdout())
	if err != nil {
		return usagef("--json: %v", err)
	}
	defer closeJSON() //nolint:errcheck // early-return cleanup: the success path closes it and reports its error
	if jsonW != nil {
		if err := writeJSON(jsonW, closeJSON, rep); err != nil {
			return err
		}
	}
	if !f.quiet && !(format == "json" && f.jsonOut == "-") {
		out := cmd.OutOrStdout()
		if f.jsonOut == "-" {
			out = cmd.ErrOrStderr()
		}
		if err := writeCompare(out, rep, format); err != nil {
			return err
		}
	}
	if rep.Failed {
		var fired []string
		for _, c := range rep.Checks {
			if c.Failed {
				fired = append(fired, c.Rule)
			}
		}
		return exitError{code: exitThreshold, err: fmt.Errorf("--fail-if %s: a real regression", strings.Join(fired, ","))}
	}
	return nil
}

func writeCompare(w io.Writer, rep *compare.Report, format string) error {
	switch format {
	case "markdown":
		return rep.WriteMarkdown(w)
	case "json":
		return rep.WriteJSON(w)
	}
	return rep.WriteText(w)
}

// compareErr is err as the command's error: bad input exits 2.
func compareErr(side string, err error) error {
	if side != "" {
		err = fmt.Errorf("%s: %w", side, err)
	}
	if compare.IsInput(err) {
		return usageError{err}
	}
	return err
}
