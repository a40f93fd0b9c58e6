// Package fields words messages that name the fields of a library's
// configuration. A library package (gen, lab) writes the fields its error
// is about as {Field} or {Struct.Field}; Words renders them, with the field
// names for a library caller, or with the command-line flags the CLI has
// for them. So no library error names a CLI flag, and the CLI's errors name
// the flags the user typed.
//
// Imports: a leaf of internal/ (helpers loadlab's packages share); it
// imports no other loadlab package.
package fields

import (
	"fmt"
	"strings"
)

// Words returns msg with every {Field} placeholder (a capitalized Go
// identifier path, e.g. {TLS.Resume}) replaced by name(field), or by the
// field name itself when name is nil. Braces around anything else (a URL's
// {id}, say) are left as they are.
func Words(msg string, name func(field string) string) string {
	if strings.IndexByte(msg, '{') < 0 {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(msg[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(msg[:i])
		f := msg[i+1 : i+j]
		switch {
		case !isField(f):
			b.WriteString(msg[i : i+j+1])
		case name != nil:
			b.WriteString(name(f))
		default:
			b.WriteString(f)
		}
		msg = msg[i+j+1:]
	}
	b.WriteString(msg)
	return b.String()
}

// isField reports whether s looks like a field path: identifiers that each
// start with an upper-case letter, joined by dots.
func isField(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" || part[0] < 'A' || part[0] > 'Z' {
			return false
		}
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Error is an error whose message names fields as {Field}: its Error
// names them by their field names; Words by what name says.
type Error struct{ Msg string }

// Errorf returns an *Error formatted like fmt.Sprintf.
func Errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

func (e *Error) Error() string { return Words(e.Msg, nil) }

// Words renders the message with name(field) for each field.
func (e *Error) Words(name func(field string) string) string { return Words(e.Msg, name) }
