package h1

import "bytes"

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
