package backend

import (
	"strconv"
	"strings"
)

// Sizes of the fixed bodies, in bytes.
const (
	Size1K   = 1024
	Size100K = 100 * 1024
	Size1M   = 1024 * 1024
)

// Precomputed bodies; built once at package init and never modified, so
// handlers hand them to the server without copying.
var (
	body1k   = make1kJSON()
	body100k = makePattern(Size100K)
	body1m   = makePattern(Size1M)
)

// Body returns a copy of the fixed body served at path ("/1k", "/100k" or
// "/1m"), or nil for any other path. Clients use it to verify responses.
func Body(path string) []byte {
	var b []byte
	switch path {
	case "/1k":
		b = body1k
	case "/100k":
		b = body100k
	case "/1m":
		b = body1m
	default:
		return nil
	}
	return append([]byte(nil), b...)
}

// make1kJSON builds a JSON object of exactly Size1K bytes, newline included:
// a few small items and a "pad" string that fills the rest.
func make1kJSON() []byte {
	var sb strings.Builder
	sb.WriteString(`{"service":"loadlab-backend","size":1024,"items":[`)
	for i := 1; i <= 8; i++ {
		if i > 1 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":`)
		sb.WriteString(strconv.Itoa(i))
		sb.WriteString(`,"name":"item-0`)
		sb.WriteString(strconv.Itoa(i))
		sb.WriteString(`","value":`)
		sb.WriteString(strconv.Itoa(1000 + i*37))
		sb.WriteByte('}')
	}
	sb.WriteString(`],"pad":"`)
	const suffix = "\"}\n"
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := 0; sb.Len() < Size1K-len(suffix); i++ {
		sb.WriteByte(alphabet[i%len(alphabet)])
	}
	sb.WriteString(suffix)
	return []byte(sb.String())
}

// patternLine is the length of one line of the large bodies.
const patternLine = 64

// makePattern builds size bytes (a multiple of patternLine) of 64-byte lines
// "loadlab NNNNNNNNNN <filler>\n" numbered from 0, so a misplaced or missing
// range is easy to spot in a dump.
func makePattern(size int) []byte {
	const filler = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR" // 44 bytes
	b := make([]byte, 0, size)
	for i := 0; len(b) < size; i++ {
		b = append(b, "loadlab "...)
		n := strconv.Itoa(i)
		for pad := 10 - len(n); pad > 0; pad-- {
			b = append(b, '0')
		}
		b = append(b, n...)
		b = append(b, ' ')
		b = append(b, filler...)
		b = append(b, '\n')
	}
	return b[:size]
}
