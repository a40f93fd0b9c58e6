package result

import "github.com/loadlab/loadlab/internal/fields"

// usage is a UsageError (internal/fields) not tied to one field: a file to
// merge that does not fit, or a threshold that does not parse.
func usage(format string, args ...any) error { return fields.Usagef(format, args...) }

// fieldErr is a UsageError about field.
func fieldErr(field, format string, args ...any) error {
	return fields.FieldErrorf(field, format, args...)
}
