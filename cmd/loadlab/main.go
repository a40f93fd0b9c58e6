// Command loadlab is a load generator and a reverse-proxy lab in one binary.
//
// Subcommands map to packages: gen (gen/), serve and lab (lab/), certs
// (certs/), report (lab/), pin (pin/). Each subcommand lives in its own file
// and registers itself on the root command in an init function.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses shared by every subcommand.
const (
	exitOK       = 0
	exitRunError = 1 // the run could not start or failed
	exitUsage    = 2 // bad flags or arguments
)

// usageError marks an error caused by bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
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

var rootCmd = &cobra.Command{
	Use:           "loadlab",
	Short:         "An honest load generator and a reverse-proxy benchmark lab",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func init() {
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI with args and returns the process exit status.
func run(args []string) int {
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "loadlab:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "loadlab:", err)
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
