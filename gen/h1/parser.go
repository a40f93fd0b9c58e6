package h1

import (
	"bytes"
	"errors"
	"io"
)

// Parser limits. Responses beyond them are parse errors, not unbounded work.
const (
	// MaxHeaderBytes bounds the status line plus all header lines (and the
	// chunked trailer) of one response.
	MaxHeaderBytes = 64 << 10
	// maxChunkSizeDigits bounds the hex digits of a chunk size: 15 digits
	// (up to 2^60-1 bytes) fit an int64 with room to spare.
	maxChunkSizeDigits = 15
	// maxChunkExtBytes bounds chunk extensions, which are skipped.
	maxChunkExtBytes = 4 << 10
)

// Parse errors. Each is a fixed value so the hot path never allocates.
var (
	errStatusLine     = errors.New("malformed status line (not an HTTP/1.x response)")
	errHeaderLine     = errors.New("malformed header line")
	errHeaderTooLarge = errors.New("response headers exceed 64 KiB (the parser's limit)")
	errContentLength  = errors.New("invalid Content-Length")
	errChunkSize      = errors.New("malformed chunk size")
	errChunkTooLarge  = errors.New("chunk size too large (more than 15 hex digits)")
	errChunkCRLF      = errors.New("chunk data not followed by CRLF")
	errChunkExt       = errors.New("chunk extension too long")
	errTrailingBytes  = errors.New("unexpected bytes after a complete response")
	errSwitching      = errors.New("unexpected 101 Switching Protocols")
	// ErrClosedEarly is EOF's answer when the connection closed before
	// the response was complete.
	ErrClosedEarly = errors.New("connection closed before the response was complete")
)

// IsParseError reports whether err is one of the parser's errors about a
// malformed response (ErrClosedEarly is not: the response was cut short).
func IsParseError(err error) bool {
	switch err {
	case errStatusLine, errHeaderLine, errHeaderTooLarge, errContentLength,
		errChunkSize, errChunkTooLarge, errChunkCRLF, errChunkExt,
		errTrailingBytes, errSwitching:
		return true
	}
	return false
}

// Parser states.
const (
	psStart = iota // nothing of this response seen yet
	psVersion
	psStatus
	psReason
	psStatusLF
	psLineStart // start of a header line (or the empty line ending them)
	psName
	psValueSkipWS
	psValue
	psLineLF    // after a CR inside the header section
	psHeadersLF // after the CR of the empty line
	psBodyLength
	psBodyClose // body runs until the connection closes
	psChunkSize
	psChunkExt
	psChunkSizeLF
	psChunkData
	psChunkDataCR
	psChunkDataLF
	psTrailerStart
	psTrailer
	psTrailerLF
	psTrailerEndLF
	psDone
)

// Header names the parser looks at; every other header is skipped.
const (
	hdrNone = iota
	hdrContentLength
	hdrTransferEncoding
	hdrConnection
)

var watchedHeaders = [...]string{"", "content-length", "transfer-encoding", "connection"}

// Parser is a streaming HTTP/1.x response parser. It is fed the bytes of one
// connection as they arrive, in any split, and keeps only a few counters and a
// 64-byte window of the headers it needs (Content-Length, Transfer-Encoding,
// Connection). Body bytes are skipped in place, never copied; if BodySink is
// set they are also written to it (e.g. a hash).
//
// A Parser is not safe for concurrent use. The zero value is ready for a
// response to a non-HEAD request.
type Parser struct {
	// NoBody marks the response to a HEAD request.
	NoBody bool
	// BodySink, if not nil, receives every body byte (decoded from chunks).
	BodySink io.Writer

	state    uint8
	verPos   uint8
	minor    uint8
	digits   uint8
	which    uint8
	alive    uint8 // bitmask of watched header names still matching
	nameLen  int
	hdrBytes int
	valLen   int
	val      [64]byte
	count    int64 // chunk-size / Content-Length accumulator

	// Status is the response status code, valid once headers are parsed.
	Status int
	// HTTP10 reports an HTTP/1.0 response.
	HTTP10 bool
	// Close reports that the connection cannot be reused after this response.
	Close bool

	contentLength int64
	haveCL        bool
	chunked       bool
	keepAlive     bool
	remaining     int64
	// BodyBytes counts body bytes of the current response (after chunk decoding).
	BodyBytes int64
	// HeaderBytes counts the status line and header bytes of the current response.
	HeaderBytes int64
}

// Reset prepares p for the next response on the same or a new connection,
// keeping NoBody and BodySink.
func (p *Parser) Reset() {
	nb, sink := p.NoBody, p.BodySink
	*p = Parser{NoBody: nb, BodySink: sink}
}

// Done reports whether a complete response has been parsed.
func (p *Parser) Done() bool { return p.state == psDone }

// Started reports whether any byte of the current response has been seen.
func (p *Parser) Started() bool { return p.state != psStart }

// Feed parses b. It returns the number of bytes consumed and whether the
// response is complete. Bytes after a complete response are not consumed:
// the caller decides whether they are an error (no pipelining here).
func (p *Parser) Feed(b []byte) (int, bool, error) {
	i := 0
	for i < len(b) {
		switch p.state {
		case psBodyLength:
			n := int64(len(b) - i)
			if n > p.remaining {
				n = p.remaining
			}
			p.body(b[i : i+int(n)])
			i += int(n)
			p.remaining -= n
			if p.remaining == 0 {
				p.state = psDone
				return i, true, nil
			}
			continue
		case psBodyClose:
			p.body(b[i:])
			return len(b), false, nil
		case psChunkData:
			n := int64(len(b) - i)
			if n > p.remaining {
				n = p.remaining
			}
			p.body(b[i : i+int(n)])
			i += int(n)
			p.remaining -= n
			if p.remaining == 0 {
				p.state = psChunkDataCR
			}
			continue
		case psDone:
			return i, true, nil
		}
		// Fast paths: the status line's fixed start, whole header lines,
		// and the rest of lines whose content does not matter. They must
		// accept and reject exactly what the byte-at-a-time machine below
		// does (FuzzParser checks it).
		if p.state == psStart && p.statusStart(b[i:]) {
			i += statusPrefixLen
			if err := p.countHeader(statusPrefixLen); err != nil {
				return i, false, err
			}
			continue
		}
		if p.state == psLineStart {
			if nl := bytes.IndexByte(b[i:], '\n'); nl >= 0 {
				line := b[i : i+nl+1]
				i += len(line)
				if err := p.countHeader(len(line)); err != nil {
					return i, false, err
				}
				if err := p.headerLine(line); err != nil {
					return i, false, err
				}
				if p.state == psDone {
					return i, true, nil
				}
				continue
			}
		}
		if p.state == psReason || (p.state == psValue && p.which == hdrNone) {
			seg := b[i:]
			nl := bytes.IndexByte(seg, '\n')
			if nl >= 0 {
				seg = seg[:nl+1]
			}
			cr := bytes.IndexByte(seg, '\r')
			switch {
			case cr >= 0 && cr == nl-1, cr < 0 && nl >= 0:
				p.state = psLineStart // the line ends here (CRLF or bare LF)
			case cr >= 0:
				seg = seg[:cr] // a CR that may not end the line: the byte machine decides
			}
			if len(seg) > 0 {
				i += len(seg)
				if err := p.countHeader(len(seg)); err != nil {
					return i, false, err
				}
				continue
			}
		}
		c := b[i]
		i++
		if p.state < psBodyLength || p.state >= psTrailerStart {
			p.hdrBytes++
			p.HeaderBytes++
			if p.hdrBytes > MaxHeaderBytes {
				return i, false, errHeaderTooLarge
			}
		}
		if err := p.step(c); err != nil {
			return i, false, err
		}
		if p.state == psDone {
			return i, true, nil
		}
	}
	return i, p.state == psDone, nil
}

// statusPrefixLen is the length of "HTTP/1.x NNN ".
const statusPrefixLen = 13

// statusStart takes "HTTP/1.x NNN " (a status of at least 100 followed by
// a space) at once, leaving the parser in the reason phrase; anything else
// is left to the byte machine, which also produces its errors.
func (p *Parser) statusStart(b []byte) bool {
	if len(b) < statusPrefixLen || string(b[:7]) != "HTTP/1." || !isDigit(b[7]) || b[8] != ' ' ||
		!isDigit(b[9]) || !isDigit(b[10]) || !isDigit(b[11]) || b[9] == '0' || b[12] != ' ' {
		return false
	}
	p.minor = b[7] - '0'
	p.HTTP10 = p.minor == 0
	p.Status = int(b[9]-'0')*100 + int(b[10]-'0')*10 + int(b[11]-'0')
	p.digits = 3
	p.verPos = 8
	p.state = psReason
	return true
}

func (p *Parser) body(b []byte) {
	p.BodyBytes += int64(len(b))
	if p.BodySink != nil && len(b) > 0 {
		p.BodySink.Write(b) //nolint:errcheck // BodySink's errors are not the response's (its doc): the generator's sink is a hash
	}
}

// EOF tells the parser that the peer closed the connection. It reports
// whether that completed the response (a body delimited by the close).
func (p *Parser) EOF() (bool, error) {
	switch p.state {
	case psDone:
		return true, nil
	case psBodyClose:
		p.state = psDone
		return true, nil
	}
	return false, ErrClosedEarly
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
