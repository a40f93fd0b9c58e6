package h2

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"

	"github.com/loadlab/loadlab/gen/internal/prefixint"
)

// Request describes the one request every stream of a run sends.
type Request struct {
	Method    string // "GET" when empty
	Scheme    string // "http" or "https"
	Authority string // host[:port], sent as :authority
	Path      string // path and query; "/" when empty
	// Header holds the extra fields. Names are matched case-insensitively
	// and sent lowercased. A "host" field replaces Authority. Fields HTTP/2
	// forbids (connection, keep-alive, proxy-connection, transfer-encoding,
	// upgrade, and te other than "trailers") are left out, as is
	// content-length, which is derived from Body. Sensitive fields are sent
	// as never-indexed literals.
	Header []hpack.HeaderField
	Body   []byte
}

// Template is a request encoded once: the HPACK header block and the body.
// The block uses only the static table and literals without indexing, so it
// does not depend on any connection's dynamic table and every stream of
// every connection sends the same bytes. A Template is read-only after
// NewTemplate and safe to share between goroutines.
type Template struct {
	block []byte
	body  []byte
}

// Block returns the encoded header block. The caller must not modify it.
func (t *Template) Block() []byte { return t.block }

// Body returns the request body. The caller must not modify it.
func (t *Template) Body() []byte { return t.body }

// connectionSpecific are the fields RFC 9113 section 8.2.2 forbids.
var connectionSpecific = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true,
}

// NewTemplate validates r and encodes it.
func NewTemplate(r Request) (*Template, error) {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	if !httpguts.ValidHeaderFieldName(method) { // a method is a token
		return nil, fmt.Errorf("invalid method %q", method)
	}
	if r.Scheme != "http" && r.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q: want http or https", r.Scheme)
	}
	path := r.Path
	if path == "" {
		path = "/"
	}
	if !validValue(path) || strings.ContainsAny(path, " ") {
		return nil, fmt.Errorf("invalid path %q", path)
	}
	authority := r.Authority
	hasUA := false
	fields := make([]hpack.HeaderField, 0, len(r.Header)+2)
	for _, f := range r.Header {
		name := strings.ToLower(strings.TrimSpace(f.Name))
		value := strings.TrimSpace(f.Value)
		switch {
		case name == "" || strings.HasPrefix(name, ":") || !httpguts.ValidHeaderFieldName(name):
			return nil, fmt.Errorf("invalid header name %q", f.Name)
		case !validValue(value):
			return nil, fmt.Errorf("invalid value for header %q", f.Name)
		case name == "host":
			authority = value
			continue
		case connectionSpecific[name], name == "content-length",
			name == "te" && !strings.EqualFold(value, "trailers"):
			continue
		case name == "user-agent":
			hasUA = true
		}
		fields = append(fields, hpack.HeaderField{Name: name, Value: value, Sensitive: f.Sensitive})
	}
	if authority == "" {
		return nil, errors.New("empty authority: set the target host or a host header")
	}
	if !validValue(authority) {
		return nil, fmt.Errorf("invalid authority %q", authority)
	}
	if !hasUA {
		fields = append(fields, hpack.HeaderField{Name: "user-agent", Value: "loadlab"})
	}
	if len(r.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		fields = append(fields, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(r.Body))})
	}

	var b []byte
	b = appendField(b, ":method", method, false)
	b = appendField(b, ":scheme", r.Scheme, false)
	b = appendField(b, ":authority", authority, false)
	b = appendField(b, ":path", path, false)
	for _, f := range fields {
		b = appendField(b, f.Name, f.Value, f.Sensitive)
	}
	return &Template{block: b, body: append([]byte(nil), r.Body...)}, nil
}

// validValue reports whether v may be sent as a field value.
func validValue(v string) bool { return httpguts.ValidHeaderFieldValue(v) }

// appendField appends one field without touching any dynamic table: an
// indexed static entry when name and value match one exactly, else a
// literal without indexing (never indexed when sensitive), with the name
// indexed when the static table has it.
func appendField(b []byte, name, value string, sensitive bool) []byte {
	if !sensitive {
		if i := staticExact(name, value); i > 0 {
			return appendVarInt(b, 7, 0x80, uint64(i))
		}
	}
	first := byte(0x00) // literal without indexing, 4-bit prefix
	if sensitive {
		first = 0x10 // literal never indexed
	}
	if i := staticName(name); i > 0 {
		b = appendVarInt(b, 4, first, uint64(i))
	} else {
		b = append(b, first)
		b = appendString(b, name)
	}
	return appendString(b, value)
}

// appendString appends an HPACK string literal, Huffman-coded when that is
// shorter.
func appendString(b []byte, s string) []byte {
	if n := hpack.HuffmanEncodeLength(s); n < uint64(len(s)) {
		b = appendVarInt(b, 7, 0x80, n)
		return hpack.AppendHuffmanString(b, s)
	}
	b = appendVarInt(b, 7, 0, uint64(len(s)))
	return append(b, s...)
}

// appendVarInt appends v as an HPACK integer with an n-bit prefix; first
// carries the representation's high bits.
func appendVarInt(b []byte, n uint, first byte, v uint64) []byte {
	return prefixint.Append(b, n, first, v)
}
