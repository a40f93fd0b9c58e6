package main

import (
	"fmt"
	"strings"
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
