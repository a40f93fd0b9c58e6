package gen

import "github.com/loadlab/loadlab/gen/h2"

// validateH2 checks the options that HTTP/2 adds or that only make sense
// with it. Streams 0 is left for Defaults (DefaultStreams, 1 with NewConn).
func (c *Config) validateH2() error {
	if !c.HTTP2 {
		if c.Streams != 0 {
			return fieldErr("Streams", "is HTTP/2's streams per connection: add {HTTP2}, or drop it")
		}
		return nil
	}
	if c.HTTP3 {
		return fieldErr("HTTP2", "and {HTTP3} exclude each other: pick one protocol")
	}
	if c.Streams < 0 || c.Streams > h2.MaxStreamsLimit {
		return fieldErr("Streams", "must be between 1 and %d (got %d)", h2.MaxStreamsLimit, c.Streams)
	}
	if c.NewConn && c.Streams > 1 {
		return fieldErr("Streams", "%d with {NewConn}: a new connection per request carries one stream; drop {Streams} or {NewConn}", c.Streams)
	}
	return nil
}

// alpn is what the TLS handshake offers: h2 alone with HTTP2 (a server
// that answers with another protocol, or none, fails the connection as a
// tls error), else http/1.1.
func (c *Config) alpn() string {
	if c.HTTP2 {
		return "h2"
	}
	return "http/1.1"
}
