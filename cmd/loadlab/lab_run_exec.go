package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadlab/loadlab/lab"
)

// exitInterrupted is the status after Ctrl-C (128 + SIGINT).
const exitInterrupted = 130

// runLab runs `loadlab lab run`: the lab's pipeline (lab.Run) with the
// flags as given.
func runLab(cmd *cobra.Command, f *labRunFlags) error {
	var lm *lab.Metrics
	if f.metrics.addr != "" {
		labels, err := f.metrics.labelSet(time.Now())
		if err != nil {
			return err
		}
		lm = lab.NewMetrics(labels)
	}
	ep, err := f.metrics.start(cmd.ErrOrStderr(), lm)
	if err != nil {
		return err
	}
	err = lab.Run(cmd.Context(), lab.RunOptions{
		Plan: f.plan, Out: f.out, Profiles: lab.SplitList(f.profiles), Bins: f.bins, Scenarios: lab.SplitList(f.scenarios),
		Keys: f.keys, StepScale: f.stepScale, Net: f.net, NoCgroups: f.noCgroups,
		ServerCPUs: f.serverCPUs, BackendCPUs: f.backendCPUs, LoadgenCPUs: f.loadgenCPUs,
		Memory: f.memory, DryRun: f.dryRun, Quiet: f.quiet,
		Serve: f.serve, ServeLinger: f.serveLinger, AllowRemote: f.allowRemote,
		Metrics: lm, Stdout: cmd.OutOrStdout(), Log: cmd.ErrOrStderr(),
	})
	ep.stop(errors.Is(err, lab.ErrInterrupted))
	if errors.Is(err, lab.ErrInterrupted) {
		return exitError{code: exitInterrupted, err: err}
	}
	return err
}

// labRunFlags are the flags of `loadlab lab run`.
type labRunFlags struct {
	plan        string
	out         string
	profiles    string
	bins        []string
	scenarios   string
	keys        string
	stepScale   float64
	net         string
	noCgroups   bool
	serverCPUs  string
	backendCPUs string
	loadgenCPUs string
	memory      string
	dryRun      bool
	quiet       bool
	serveFlags
	metrics metricsFlags
}
