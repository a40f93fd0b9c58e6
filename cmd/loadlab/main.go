// Command loadlab is a load generator and a reverse-proxy lab in one binary.
//
// Subcommands map to packages: gen (gen/), serve and lab (lab/), certs
// (certs/), report (lab/), pin (pin/). Each subcommand lives in its own file
// as a constructor (newGenCmd, ...); newRootCmd builds the whole tree, so
// every run (and every test) starts from fresh flags.
//
// It owns the command line: the subcommands, their flags and help, exit
// statuses and the words of usage errors. Imports run cmd -> lab -> gen ->
// pin (certs, k8s, image and internal/ beside them): this package is at the
// top, may import every library package, and no package may import it.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses shared by every subcommand.
const (
	exitOK       = 0
	exitRunError = 1 // the run could not start or failed
	exitUsage    = 2 // bad flags or arguments
	// exitThreshold: the run finished and its result was written, but a
	// check failed (gen --threshold; compare --fail-if uses it too).
	exitThreshold = 3
)

// usageError marks an error caused by bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return genWords(e.err) }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error (exit 2) with a formatted one-line message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitError carries an explicit exit status (e.g. 130 after SIGINT) out of a
// command whose result was still written.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// newRootCmd builds the whole command tree with fresh flags.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "loadlab",
		Short:         "An honest load generator and a reverse-proxy benchmark lab",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newGenCmd(), newServeCmd(), newLabCmd(), newCertsCmd(), newReportCmd(), newPinCmd(), newMergeCmd(), newCompareCmd(), newK8sCmd(), newExecWrapperCmd(), newReaperCmd())
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI with args on the process's standard output and
// error and returns the exit status.
func run(args []string) int { return execute(args, os.Stdout, os.Stderr) }

// execute runs a fresh command tree with args, writing to stdout and
// stderr, and returns the process exit status.
func execute(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "loadlab:", genWords(ee.err))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "loadlab:", genWords(err))
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitRunError
}

// isCobraUsage reports errors cobra raises for bad arguments or commands.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
