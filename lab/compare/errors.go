package compare

import (
	"errors"
	"fmt"

	"github.com/loadlab/loadlab/internal/fields"
)

// InputError is bad input: a file that cannot be read or is not a
// result, mixed kinds. Its text is one line.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

// inputErr returns an InputError with a formatted one-line message.
func inputErr(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// IsInput reports whether err is bad input (exit status 2 on the CLI).
func IsInput(err error) bool {
	var ie *InputError
	return errors.As(err, &ie) || fields.IsUsage(err)
}
