package fields

import (
	"errors"
	"fmt"
)

// UsageError is an error in a library's configuration: the caller's input,
// not the run, is at fault. The CLI exits 2 on it.
//
// Msg names the fields it is about as {Field}, e.g. "{TLS.ZeroRTT} needs
// {TLS.Resume}". Error writes them as the field names; a caller with other
// names for them (the CLI: its flags) words the message with Words.
type UsageError struct {
	Field string // the field at fault, "" if none in particular
	Msg   string
}

func (e *UsageError) Error() string { return e.Words(nil) }

// Words renders the message with name(field) for every field it names
// (nil: the field names), prefixed by the field at fault.
func (e *UsageError) Words(name func(field string) string) string {
	msg := Words(e.Msg, name)
	if e.Field == "" {
		return msg
	}
	f := e.Field
	if name != nil {
		f = name(f)
	}
	return f + ": " + msg
}

// Usagef is a UsageError not tied to one field.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// FieldErrorf is a UsageError about field; format may name fields as
// {Field}.
func FieldErrorf(field, format string, args ...any) error {
	return &UsageError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// IsUsage reports whether err is a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}
