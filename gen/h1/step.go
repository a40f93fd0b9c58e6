package h1

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
