package lab

import (
	"errors"
	"fmt"
)

// UsageError marks an error caused by bad input (a flag, a plan, an
// argument): the CLI exits 2 on it.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// usagef returns a UsageError with a formatted one-line message.
func usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// ErrInterrupted is wrapped by the error of a run or check that a signal
// ended: what it measured was still written, and nothing it started is
// left behind.
var ErrInterrupted = errors.New("interrupted")
