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

// countHeader adds n header-section bytes and enforces MaxHeaderBytes.
func (p *Parser) countHeader(n int) error {
	p.hdrBytes += n
	p.HeaderBytes += int64(n)
	if p.hdrBytes > MaxHeaderBytes {
		return errHeaderTooLarge
	}
	return nil
}

// headerLine handles one complete header line (with its LF) at once.
func (p *Parser) headerLine(line []byte) error {
	end := len(line) - 1
	if end > 0 && line[end-1] == '\r' {
		end--
	}
	if end == 0 {
		return p.headersDone()
	}
	if line[0] == ' ' || line[0] == '\t' {
		// obsolete line folding: the continuation is skipped
		if bytes.IndexByte(line[:end], '\r') >= 0 {
			return errHeaderLine
		}
		return nil
	}
	// The name runs to the first colon; a control byte, space or DEL in
	// it (a CR among them) is an error. Every rejection here is the same
	// error, so one pass over the name and one over the value find them.
	colon := 0
	for ; colon < end; colon++ {
		c := line[colon]
		if c == ':' {
			break
		}
		if c <= ' ' || c == 0x7f {
			return errHeaderLine
		}
	}
	if colon == 0 || colon == end {
		return errHeaderLine
	}
	v := line[colon+1 : end]
	if bytes.IndexByte(v, '\r') >= 0 {
		return errHeaderLine
	}
	name := line[:colon]
	p.which = hdrNone
	for h := hdrContentLength; h <= hdrConnection; h++ {
		if len(name) == len(watchedHeaders[h]) && equalFoldLower(name, watchedHeaders[h]) {
			p.which = uint8(h)
		}
	}
	if p.which == hdrNone {
		return nil
	}
	p.valLen, p.count, p.digits = 0, 0, 0
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for _, c := range v {
		if err := p.valueByte(c); err != nil {
			return err
		}
	}
	return p.valueDone()
}

// equalFoldLower compares b with the lower-case ASCII string s, ignoring case.
func equalFoldLower(b []byte, s string) bool {
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
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

// step advances the header / chunk-framing state machine by one byte.
func (p *Parser) step(c byte) error {
	switch p.state {
	case psStart:
		p.state = psVersion
		p.verPos = 0
		fallthrough
	case psVersion:
		// "HTTP/1.x "
		const prefix = "HTTP/1."
		switch {
		case p.verPos < uint8(len(prefix)):
			if c != prefix[p.verPos] {
				return errStatusLine
			}
		case p.verPos == uint8(len(prefix)):
			if !isDigit(c) {
				return errStatusLine
			}
			p.minor = c - '0'
		default:
			if c != ' ' {
				return errStatusLine
			}
			p.HTTP10 = p.minor == 0
			p.state = psStatus
			p.Status = 0
			p.digits = 0
			return nil
		}
		p.verPos++
	case psStatus:
		if p.digits < 3 {
			if !isDigit(c) {
				return errStatusLine
			}
			p.Status = p.Status*10 + int(c-'0')
			p.digits++
			return nil
		}
		switch c {
		case ' ':
			p.state = psReason
		case '\r':
			p.state = psStatusLF
		case '\n':
			p.state = psLineStart
		default:
			return errStatusLine
		}
		if p.Status < 100 {
			return errStatusLine
		}
	case psReason:
		switch c {
		case '\r':
			p.state = psStatusLF
		case '\n':
			p.state = psLineStart
		}
	case psStatusLF:
		if c != '\n' {
			return errStatusLine
		}
		p.state = psLineStart
	case psLineStart:
		switch c {
		case '\r':
			p.state = psHeadersLF
			return nil
		case '\n':
			return p.headersDone()
		case ' ', '\t':
			// obsolete line folding: skip the continuation line
			p.which = hdrNone
			p.state = psValue
			return nil
		case ':':
			return errHeaderLine
		}
		p.alive = 1<<hdrContentLength | 1<<hdrTransferEncoding | 1<<hdrConnection
		p.nameLen = 0
		p.state = psName
		return p.nameByte(c)
	case psName:
		if c == ':' {
			p.which = hdrNone
			for h := hdrContentLength; h <= hdrConnection; h++ {
				if p.alive&(1<<h) != 0 && p.nameLen == len(watchedHeaders[h]) {
					p.which = uint8(h)
				}
			}
			p.valLen = 0
			p.count = 0
			p.digits = 0
			p.state = psValueSkipWS
			return nil
		}
		if c == '\r' || c == '\n' || c == ' ' || c == '\t' {
			return errHeaderLine
		}
		return p.nameByte(c)
	case psValueSkipWS:
		if c == ' ' || c == '\t' {
			return nil
		}
		p.state = psValue
		fallthrough
	case psValue:
		switch c {
		case '\r':
			p.state = psLineLF
			return p.valueDone()
		case '\n':
			p.state = psLineStart
			return p.valueDone()
		}
		return p.valueByte(c)
	case psLineLF:
		if c != '\n' {
			return errHeaderLine
		}
		p.state = psLineStart
	case psHeadersLF:
		if c != '\n' {
			return errHeaderLine
		}
		return p.headersDone()
	case psChunkSize:
		switch {
		case isDigit(c), c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if p.digits == maxChunkSizeDigits {
				return errChunkTooLarge
			}
			p.count = p.count<<4 | int64(hexVal(c))
			p.digits++
		case c == ';' || c == ' ' || c == '\t':
			if p.digits == 0 {
				return errChunkSize
			}
			p.valLen = 0
			p.state = psChunkExt
		case c == '\r':
			if p.digits == 0 {
				return errChunkSize
			}
			p.state = psChunkSizeLF
		case c == '\n':
			if p.digits == 0 {
				return errChunkSize
			}
			p.chunkSizeDone()
		default:
			return errChunkSize
		}
	case psChunkExt:
		switch c {
		case '\r':
			p.state = psChunkSizeLF
		case '\n':
			p.chunkSizeDone()
		default:
			p.valLen++
			if p.valLen > maxChunkExtBytes {
				return errChunkExt
			}
		}
	case psChunkSizeLF:
		if c != '\n' {
			return errChunkSize
		}
		p.chunkSizeDone()
	case psChunkDataCR:
		switch c {
		case '\r':
			p.state = psChunkDataLF
		case '\n':
			p.startChunk()
		default:
			return errChunkCRLF
		}
	case psChunkDataLF:
		if c != '\n' {
			return errChunkCRLF
		}
		p.startChunk()
	case psTrailerStart:
		switch c {
		case '\r':
			p.state = psTrailerEndLF
		case '\n':
			p.state = psDone
		default:
			p.state = psTrailer
		}
	case psTrailer:
		switch c {
		case '\r':
			p.state = psTrailerLF
		case '\n':
			p.state = psTrailerStart
		}
	case psTrailerLF:
		if c != '\n' {
			return errHeaderLine
		}
		p.state = psTrailerStart
	case psTrailerEndLF:
		if c != '\n' {
			return errHeaderLine
		}
		p.state = psDone
	}
	return nil
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func (p *Parser) startChunk() {
	p.count = 0
	p.digits = 0
	p.state = psChunkSize
}

func (p *Parser) chunkSizeDone() {
	if p.count == 0 {
		p.state = psTrailerStart
		return
	}
	p.remaining = p.count
	p.state = psChunkData
}

func (p *Parser) nameByte(c byte) error {
	if c <= ' ' || c == 0x7f {
		return errHeaderLine
	}
	if p.alive != 0 {
		lc := lower(c)
		for h := hdrContentLength; h <= hdrConnection; h++ {
			bit := uint8(1 << h)
			if p.alive&bit != 0 {
				name := watchedHeaders[h]
				if p.nameLen >= len(name) || name[p.nameLen] != lc {
					p.alive &^= bit
				}
			}
		}
	}
	p.nameLen++
	return nil
}

func (p *Parser) valueByte(c byte) error {
	switch p.which {
	case hdrContentLength:
		if c == ' ' || c == '\t' {
			p.digits |= 0x80 // trailing whitespace seen: no more digits allowed
			return nil
		}
		if !isDigit(c) || p.digits&0x80 != 0 || p.count > (1<<62)/10 {
			return errContentLength
		}
		p.count = p.count*10 + int64(c-'0')
		p.digits++
	case hdrTransferEncoding, hdrConnection:
		if p.valLen < len(p.val) {
			p.val[p.valLen] = lower(c)
			p.valLen++
		} else {
			// keep the tail: the final transfer coding is what matters
			copy(p.val[:], p.val[1:])
			p.val[len(p.val)-1] = lower(c)
		}
	}
	return nil
}

func (p *Parser) valueDone() error {
	switch p.which {
	case hdrContentLength:
		if p.digits&0x7f == 0 {
			return errContentLength
		}
		if p.haveCL && p.contentLength != p.count {
			return errContentLength
		}
		p.haveCL = true
		p.contentLength = p.count
	case hdrTransferEncoding:
		v := trimSpace(p.val[:p.valLen])
		p.chunked = hasSuffixToken(v, "chunked")
	case hdrConnection:
		v := p.val[:p.valLen]
		if string(v) == "keep-alive" { // the common case, in one compare
			p.keepAlive = true
			break
		}
		if hasToken(v, "close") {
			p.Close = true
		}
		if hasToken(v, "keep-alive") {
			p.keepAlive = true
		}
	}
	p.which = hdrNone
	return nil
}

func (p *Parser) headersDone() error {
	p.hdrBytes = 0
	switch {
	case p.Status == 101:
		return errSwitching
	case p.Status < 200:
		// interim response (100 Continue, 103 Early Hints): the real one follows
		hb := p.HeaderBytes
		nb, sink := p.NoBody, p.BodySink
		*p = Parser{NoBody: nb, BodySink: sink, HeaderBytes: hb}
		return nil
	}
	if p.HTTP10 && !p.keepAlive {
		p.Close = true
	}
	switch {
	case p.NoBody || p.Status == 204 || p.Status == 304:
		p.state = psDone
	case p.chunked:
		p.startChunk()
	case p.haveCL:
		if p.contentLength == 0 {
			p.state = psDone
		} else {
			p.remaining = p.contentLength
			p.state = psBodyLength
		}
	default:
		p.Close = true
		p.state = psBodyClose
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// hasSuffixToken reports whether the last comma-separated token of v is tok.
func hasSuffixToken(v []byte, tok string) bool {
	if len(v) < len(tok) || string(v[len(v)-len(tok):]) != tok {
		return false
	}
	rest := trimSpace(v[:len(v)-len(tok)])
	return len(rest) == 0 || rest[len(rest)-1] == ','
}

// hasToken reports whether tok is one of the comma-separated tokens of v.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		j := 0
		for j < len(v) && v[j] != ',' {
			j++
		}
		if string(trimSpace(v[:j])) == tok {
			return true
		}
		if j == len(v) {
			break
		}
		v = v[j+1:]
	}
	return false
}
