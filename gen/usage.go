package gen

import "github.com/loadlab/loadlab/internal/fields"

// UsageError is an error in a Config: the caller's input, not the run, is at
// fault (the CLI exits 2 on it). Its message names the Config fields it is
// about as {Field}; Words renders them (see internal/fields).
type UsageError = fields.UsageError

// usage is a UsageError not tied to one field.
func usage(format string, args ...any) error { return fields.Usagef(format, args...) }

// fieldErr is a UsageError about field; format may name fields as {Field}.
func fieldErr(field, format string, args ...any) error {
	return fields.FieldErrorf(field, format, args...)
}

// IsUsage reports whether err is a UsageError.
func IsUsage(err error) bool { return fields.IsUsage(err) }
