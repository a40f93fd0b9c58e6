package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/spf13/cobra"
)

type mergeFlags struct {
	jsonOut   string
	quiet     bool
	partial   bool
	threshold []string
}

// newMergeCmd builds `loadlab merge`.
func newMergeCmd() *cobra.Command {
	f := &mergeFlags{}
	cmd := &cobra.Command{
		Use:   "merge [flags] FILE...",
		Short: "Merge the results of a sharded run (gen --shard) exactly, from their JSON or HdrHistogram logs",
		Long: `merge adds up the results of the shards of one run into the result of the
whole run. Histograms are added bucket by bucket, so every percentile is the
one a single generator would have measured (a percentile of percentiles
would not be); counts, status codes and error classes are summed; the
per-second series are aligned by wall clock; rates are the sum of the
shards' rates and duration_s is the window every shard covered. Every
shard's own generator verdict is kept (the "shards" list): if any shard was
the bottleneck, the merged result says so and names it.

A FILE holds one JSON result (gen --json) or several one after another, as
` + "`kubectl logs -l job-name=NAME`" + ` prints the pods of a Job; - reads
standard input. Files ending in .hlog are HdrHistogram interval logs (gen
--hdr-log): they merge only with each other, into latency alone.

Results of different targets, modes, schedules (rate, duration, warmup,
requests, connections, start time) or shard counts are refused, as are a
shard given twice and a shard missing (unless --partial).

--threshold checks the merged result as gen --threshold checks a run's
(exit status 3 when one fails): a sharded run's pass/fail belongs to the
whole run, not to each shard.`,
		Example: `  kubectl logs -l job-name=loadlab > shards.jsonl && loadlab merge shards.jsonl
  loadlab merge shard0.json shard1.json shard2.json shard3.json --json run.json
  loadlab merge a.hlog b.hlog`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("merge needs at least one FILE (the shards' results)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runMerge(cmd, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.jsonOut, "json", "", "write the merged result as JSON to FILE (- = stdout)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no human-readable output")
	fl.BoolVar(&f.partial, "partial", false, "merge even if some shards of the run are missing (the result names them)")
	fl.StringArrayVar(&f.threshold, "threshold", nil, "check the merged result, as gen --threshold does (repeatable; exit status 3 when one fails)")
	return cmd
}

func runMerge(cmd *cobra.Command, f *mergeFlags, files []string) error {
	ts, err := result.ParseThresholds(f.threshold)
	if err != nil {
		return usageError{err}
	}
	m := result.Merger{Partial: f.partial}
	stdinUsed := false
	for _, name := range files {
		var data []byte
		var err error
		if name == "-" {
			if stdinUsed {
				return usagef("- (standard input) given twice")
			}
			stdinUsed = true
			data, err = io.ReadAll(os.Stdin)
			name = "(stdin)"
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return usageError{err}
		}
		var rs []*result.Result
		if strings.HasSuffix(name, ".hlog") {
			var r *result.Result
			if r, err = result.ReadHdrLog(name, data); err == nil {
				rs = []*result.Result{r}
			}
		} else {
			rs, err = result.ReadResults(name, data)
		}
		if err != nil {
			return usageError{err}
		}
		for i, r := range rs {
			src := name
			if len(rs) > 1 {
				src = fmt.Sprintf("%s#%d", name, i+1)
			}
			if err := m.Add(src, r); err != nil {
				return usageError{err}
			}
		}
	}
	res, err := m.Result()
	if err != nil {
		return usageError{err}
	}
	res.Words(flagOf)
	if len(ts) > 0 {
		res.Thresholds, _ = result.CheckThresholds(ts, res)
	}
	jsonW, closeJSON, err := openOut(f.jsonOut, cmd.OutOrStdout())
	if err != nil {
		return usagef("--json: %v", err)
	}
	defer closeJSON() //nolint:errcheck // early-return cleanup: the success path closes it and reports its error
	if jsonW != nil {
		if err := writeJSON(jsonW, closeJSON, res); err != nil {
			return err
		}
	}
	if !f.quiet {
		out := cmd.OutOrStdout()
		if f.jsonOut == "-" {
			out = cmd.ErrOrStderr()
		}
		res.WriteText(out)
	}
	return thresholdExit(res)
}
