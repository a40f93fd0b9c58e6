package lab

import (
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/proc"
)

// The hidden subcommands the lab runs its own binary as. The CLI must
// register both under these names: lab/proc starts every proxy and backend
// through the wrapper, and every session starts the reaper.
const (
	// ExecSubcommand joins cgroups, enters a network namespace, pins CPUs,
	// drops privileges and execs the lab program (ExecMain parses its
	// flags).
	ExecSubcommand = proc.ExecSubcommand
	// ReaperSubcommand waits for a session's process to exit and removes
	// what it left if it died without cleaning up (ReaperMain parses its
	// flags).
	ReaperSubcommand = cleanup.ReaperSubcommand
)

// ExecMain runs the wrapper with its arguments; it returns only on error.
func ExecMain(args []string) error { return proc.ExecMain(args) }

// ReaperMain runs the reaper with its arguments and returns its exit
// status.
func ReaperMain(args []string) int { return cleanup.ReaperMain(args) }
