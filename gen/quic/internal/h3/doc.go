// Package h3 is the little of HTTP/3 (RFC 9114) and QPACK (RFC 9204) a
// client needs for one GET: the control stream's bytes, a request's
// HEADERS frame with a static-only QPACK field section, and a response
// parser that reads the :status, counts (and hands over) the DATA bytes
// and skips every other frame type.
//
// QPACK here uses no dynamic table (the client advertises a capacity of
// 0): a field section that refers to one is an error. Huffman-coded
// strings are decoded with golang.org/x/net/http2/hpack, whose code is
// the same, and only for :status.
//
// Response is not safe for concurrent use. Parsers allocate nothing and
// do not panic on any input (fuzz tests).
package h3
