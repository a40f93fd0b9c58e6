package h3

import (
	"bytes"
	"errors"

	"golang.org/x/net/http2/hpack"

	"github.com/loadlab/loadlab/gen/internal/prefixint"
)

// appendInt appends v as a QPACK integer with an n-bit prefix whose other
// bits are flags (RFC 9204 §4.1.1, HPACK's integer).
func appendInt(b []byte, flags byte, n uint, v uint64) []byte {
	return prefixint.Append(b, n, flags, v)
}

// readInt reads an integer with an n-bit prefix from b; used is 0 if b is
// too short or the value too large.
func readInt(b []byte, n uint) (v uint64, used int) {
	v, used, err := prefixint.Read(b, n)
	if err != nil {
		return 0, 0
	}
	return v, used
}

// Static table indices used by the encoder (RFC 9204 §A).
const (
	staticAuthority   = 0
	staticPathSlash   = 1
	staticMethod      = 15 // :method CONNECT, the first of the :method entries
	staticSchemeHTTPS = 23
)

// staticMethods are the :method values of the static table, from index
// staticMethod on.
var staticMethods = [...]string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"}

// Field is one header field of a request: Name in lower case.
type Field struct{ Name, Value string }

// AppendRequestSection appends the QPACK field section of a request with
// method (GET if empty) for authority and path over https, and fields:
// required insert count 0, base 0, static references for :method (when
// the static table has it), :scheme (and :path "/"), literals with
// static name references for the other pseudo-headers, literals with
// literal names for fields; nothing Huffman-coded. The caller lowercases
// the names and leaves out what HTTP/3 forbids.
func AppendRequestSection(b []byte, method, authority, path string, fields []Field) []byte {
	b = append(b, 0, 0)
	if method == "" {
		method = "GET"
	}
	b = appendMethod(b, method)
	b = appendInt(b, 0xc0, 6, staticSchemeHTTPS)
	b = appendLiteralRef(b, staticAuthority, authority)
	if path == "/" {
		b = appendInt(b, 0xc0, 6, staticPathSlash)
	} else {
		b = appendLiteralRef(b, staticPathSlash, path)
	}
	for _, f := range fields {
		b = appendInt(b, 0x20, 3, uint64(len(f.Name)))
		b = append(b, f.Name...)
		b = appendInt(b, 0, 7, uint64(len(f.Value)))
		b = append(b, f.Value...)
	}
	return b
}

// appendMethod appends :method: an indexed static line, or a literal
// value with the static name.
func appendMethod(b []byte, method string) []byte {
	for i, m := range staticMethods {
		if m == method {
			return appendInt(b, 0xc0, 6, uint64(staticMethod+i))
		}
	}
	return appendLiteralRef(b, staticMethod, method)
}

// appendLiteralRef appends a literal field line whose name is static
// entry i's, value v.
func appendLiteralRef(b []byte, i uint64, v string) []byte {
	b = appendInt(b, 0x50, 4, i)
	b = appendInt(b, 0, 7, uint64(len(v)))
	return append(b, v...)
}

// staticStatus is the :status value of static table entries named
// :status (RFC 9204 §A), 0 for others.
func staticStatus(i uint64) (int, bool) {
	switch i {
	case 24:
		return 103, true
	case 25:
		return 200, true
	case 26:
		return 304, true
	case 27:
		return 404, true
	case 28:
		return 503, true
	case 63:
		return 100, true
	case 64:
		return 204, true
	case 65:
		return 206, true
	case 66:
		return 302, true
	case 67:
		return 400, true
	case 68:
		return 403, true
	case 69:
		return 421, true
	case 70:
		return 425, true
	case 71:
		return 500, true
	}
	return 0, false
}

// Field section errors.
var (
	ErrSection  = errors.New("h3: malformed QPACK field section from the server")
	ErrDynamic  = errors.New("h3: the server's field section refers to the QPACK dynamic table (its capacity is 0)")
	ErrNoStatus = errors.New("h3: the server's response has no valid :status")
)

// readString reads a string literal whose length has an n-bit prefix and
// whose Huffman flag is the bit above it.
func readString(b []byte, n uint) (s []byte, huff bool, used int) {
	if len(b) == 0 {
		return nil, false, 0
	}
	huff = b[0]&(1<<n) != 0
	l, m := readInt(b, n)
	if m == 0 || uint64(len(b)-m) < l {
		return nil, false, 0
	}
	return b[m : m+int(l)], huff, m + int(l)
}

// parseStatus parses a 3-digit :status value, Huffman-decoding it with
// buf if need be.
func parseStatus(v []byte, huff bool, buf *bytes.Buffer) int {
	if huff {
		buf.Reset()
		if len(v) > 8 {
			return 0
		}
		if _, err := hpack.HuffmanDecode(buf, v); err != nil {
			return 0
		}
		v = buf.Bytes()
	}
	if len(v) != 3 {
		return 0
	}
	s := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0
		}
		s = s*10 + int(c-'0')
	}
	if s < 100 {
		return 0
	}
	return s
}

// DecodeStatus decodes a response's field section and returns its
// :status. buf is scratch for Huffman decoding.
func DecodeStatus(section []byte, buf *bytes.Buffer) (int, error) {
	ric, n := readInt(section, 8)
	if n == 0 {
		return 0, ErrSection
	}
	if ric != 0 {
		return 0, ErrDynamic
	}
	section = section[n:]
	if _, n = readInt(section, 7); n == 0 { // base (sign bit, delta)
		return 0, ErrSection
	}
	section = section[n:]
	status := 0
	for len(section) > 0 {
		c := section[0]
		switch {
		case c&0x80 != 0: // indexed field line
			if c&0x40 == 0 {
				return 0, ErrDynamic
			}
			i, m := readInt(section, 6)
			if m == 0 || i > 98 {
				return 0, ErrSection
			}
			if s, ok := staticStatus(i); ok {
				status = s
			}
			section = section[m:]
		case c&0x40 != 0: // literal with name reference
			if c&0x10 == 0 {
				return 0, ErrDynamic
			}
			i, m := readInt(section, 4)
			if m == 0 || i > 98 {
				return 0, ErrSection
			}
			v, huff, k := readString(section[m:], 7)
			if k == 0 {
				return 0, ErrSection
			}
			if _, ok := staticStatus(i); ok {
				if status = parseStatus(v, huff, buf); status == 0 {
					return 0, ErrNoStatus
				}
			}
			section = section[m+k:]
		case c&0x20 != 0: // literal with literal name
			name, huff, m := readString(section, 3)
			if m == 0 {
				return 0, ErrSection
			}
			v, vhuff, k := readString(section[m:], 7)
			if k == 0 {
				return 0, ErrSection
			}
			isStatus := !huff && string(name) == ":status"
			if huff && len(name) < 16 {
				buf.Reset()
				if _, err := hpack.HuffmanDecode(buf, name); err == nil && buf.String() == ":status" {
					isStatus = true
				}
			}
			if isStatus {
				if status = parseStatus(v, vhuff, buf); status == 0 {
					return 0, ErrNoStatus
				}
			}
			section = section[m+k:]
		default: // post-base forms refer to the dynamic table
			return 0, ErrDynamic
		}
	}
	if status == 0 {
		return 0, ErrNoStatus
	}
	return status, nil
}
