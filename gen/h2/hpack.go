package h2

import (
	"errors"
	"hash/maphash"

	"golang.org/x/net/http2/hpack"

	"github.com/loadlab/loadlab/gen/internal/prefixint"
)

// DefaultHeaderTableSize is the HPACK dynamic table size every endpoint
// starts with (SETTINGS_HEADER_TABLE_SIZE); the generator does not change it.
const DefaultHeaderTableSize = 4096

// HPACK decoding errors. Each is a fixed value so a bad block costs no
// allocation.
var (
	errHPACKIndex     = errors.New("hpack: invalid table index")
	errHPACKVarint    = errors.New("hpack: integer overflow")
	errHPACKTruncated = errors.New("hpack: truncated header block")
	errHPACKHuffman   = errors.New("hpack: invalid Huffman-coded string")
	errHPACKSize      = errors.New("hpack: dynamic table size update above the advertised maximum")
	errHPACKSizePos   = errors.New("hpack: dynamic table size update after the first field")
	errHPACKEncoding  = errors.New("hpack: invalid field representation")
	errStatusPos      = errors.New(":status is not the first field of the response headers")
	errStatusValue    = errors.New(":status is not a 3-digit code in 100-599")
)

// statusDecoder decodes response header blocks for the one field the
// generator needs, :status, while it keeps the dynamic table exactly in
// step with the server's encoder (RFC 7541). Of each dynamic entry it keeps
// only its size and, when the entry's name is :status, the code; other
// names and values are never stored or turned into strings, so decoding
// costs no allocation whatever the server indexes. (x/net/http2/hpack's
// Decoder stores every indexed literal as a Go string: against nginx, which
// sends each response field as a new indexed literal, that is four
// allocations per response.)
//
// Values are Huffman-decoded (with x/net/http2/hpack) only where their
// length counts toward the table size or they are a :status; other
// literals are skipped unchecked. A statusDecoder is not safe for
// concurrent use.
type statusDecoder struct {
	allowed uint32 // SETTINGS_HEADER_TABLE_SIZE we advertised: the bound on size updates
	max     uint32 // current maximum table size (the last size update)
	size    uint32 // sum of the entries' sizes
	ring    []dynEntry
	head    int // index in ring of the newest entry
	n       int // entries in the table
	cap     capture
	lens    lenCache
}

// lenCache remembers the decoded lengths of recently seen Huffman-coded
// values, keyed by a hash of their coded bytes: servers such as nginx send
// the same indexed literals (server, content-type, etag) in every
// response, and decoding them only to learn their length would cost more
// than the rest of the response. Two different strings would have to
// collide in 64 bits to confuse it.
type lenCache struct {
	seed maphash.Seed
	ents [64]struct {
		sum uint64
		n   int // decoded length + 1 (0: empty)
	}
}

// length returns the decoded length of Huffman-coded s.
func (d *statusDecoder) length(s []byte) (int, error) {
	c := &d.lens
	sum := maphash.Bytes(c.seed, s)
	e := &c.ents[sum%uint64(len(c.ents))]
	if e.n > 0 && e.sum == sum {
		return e.n - 1, nil
	}
	n, err := d.huffman(s)
	if err != nil {
		return 0, err
	}
	e.sum, e.n = sum, n+1
	return n, nil
}

// dynEntry is what the decoder keeps of one dynamic table entry.
type dynEntry struct {
	size     uint32 // name length + value length + 32
	nameLen  uint32 // for literals that index this entry's name
	isStatus bool   // the name is :status
	status   int16  // the code when isStatus and the value is valid, else -1
}

// capture receives a Huffman-decoded string: its length, and its first
// bytes (enough to recognise ":status" or read a code).
type capture struct {
	b [8]byte
	n int // bytes kept in b
}

// Write keeps the start of p and reports all of it written, so
// hpack.HuffmanDecode returns the decoded length.
func (c *capture) Write(p []byte) (int, error) {
	c.n = copy(c.b[:], p)
	return len(p), nil
}

func newStatusDecoder(tableSize uint32) *statusDecoder {
	d := &statusDecoder{}
	d.init(tableSize)
	return d
}

// init sets the advertised table size and empties the table.
func (d *statusDecoder) init(tableSize uint32) {
	if d.lens.seed == (maphash.Seed{}) {
		d.lens.seed = maphash.MakeSeed()
	}
	d.allowed, d.max = tableSize, tableSize
	if want := int(tableSize/32) + 1; cap(d.ring) < want {
		d.ring = make([]dynEntry, want)
	}
	d.ring = d.ring[:cap(d.ring)]
	d.size, d.head, d.n = 0, 0, 0
}

// entry returns dynamic entry k (0 is the newest, HPACK index 62).
func (d *statusDecoder) entry(k int) *dynEntry {
	i := d.head - k
	if i < 0 {
		i += len(d.ring)
	}
	return &d.ring[i]
}

// evict drops the oldest entries until the table fits max.
func (d *statusDecoder) evict(max uint32) {
	for d.size > max && d.n > 0 {
		d.size -= d.entry(d.n - 1).size
		d.n--
	}
}

// add inserts e (RFC 7541 section 4.4: an entry larger
// than the table empties it and is not added).
func (d *statusDecoder) add(e dynEntry) {
	if e.size > d.max {
		d.evict(0)
		return
	}
	d.evict(d.max - e.size)
	d.head++
	if d.head == len(d.ring) {
		d.head = 0
	}
	d.ring[d.head] = e
	d.n++
	d.size += e.size
}

// decode decodes one complete header block. It returns the :status code
// when the block starts with a :status field, else 0 (trailers, or
// malformed response headers: the caller decides). A :status anywhere but
// first is an error.
func (d *statusDecoder) decode(p []byte) (int, error) {
	status := 0
	first := true
	for len(p) > 0 {
		b := p[0]
		var (
			isStatus bool
			code     int
			err      error
		)
		switch {
		case b&0x80 != 0: // indexed field
			var idx uint64
			if idx, p, err = readVarInt(7, p); err != nil {
				return 0, err
			}
			isStatus, code, _, err = d.lookup(idx, true)
		case b&0xe0 == 0x20: // dynamic table size update
			var sz uint64
			if sz, p, err = readVarInt(5, p); err != nil {
				return 0, err
			}
			if sz > uint64(d.allowed) {
				return 0, errHPACKSize
			}
			if !first && d.size > 0 { // the same rule as x/net/http2/hpack
				return 0, errHPACKSizePos
			}
			d.max = uint32(sz)
			d.evict(d.max)
			continue
		default: // literal: with incremental indexing (01), without (0000), never indexed (0001)
			prefix, indexing := uint(4), false
			if b&0xc0 == 0x40 {
				prefix, indexing = 6, true
			} else if b&0xe0 != 0 {
				return 0, errHPACKEncoding
			}
			isStatus, code, p, err = d.literal(p, prefix, indexing)
		}
		if err != nil {
			return 0, err
		}
		if isStatus {
			if !first {
				return 0, errStatusPos
			}
			if code < 0 {
				return 0, errStatusValue
			}
			status = code
		}
		first = false
	}
	return status, nil
}

// lookup resolves table index idx. It returns whether the name is :status,
// the code (for a whole field) and the name's length.
func (d *statusDecoder) lookup(idx uint64, whole bool) (isStatus bool, code, nameLen int, err error) {
	switch {
	case idx == 0:
		return false, 0, 0, errHPACKIndex
	case idx <= staticLen:
		e := &staticTable[idx]
		if e.name != ":status" {
			return false, 0, len(e.name), nil
		}
		if whole {
			code = parseStatus(e.value)
		}
		return true, code, len(e.name), nil
	case idx-staticLen-1 < uint64(d.n):
		e := d.entry(int(idx - staticLen - 1))
		return e.isStatus, int(e.status), int(e.nameLen), nil
	}
	return false, 0, 0, errHPACKIndex
}

// literal decodes a literal field whose representation starts p.
func (d *statusDecoder) literal(p []byte, prefix uint, indexing bool) (isStatus bool, code int, rest []byte, err error) {
	nameIdx, p, err := readVarInt(prefix, p)
	if err != nil {
		return false, 0, nil, err
	}
	var nameLen int
	if nameIdx > 0 {
		if isStatus, _, nameLen, err = d.lookup(nameIdx, false); err != nil {
			return false, 0, nil, err
		}
	} else {
		var s []byte
		var huff bool
		if s, huff, p, err = readString(p); err != nil {
			return false, 0, nil, err
		}
		nameLen = len(s)
		if huff {
			if nameLen, err = d.huffman(s); err != nil {
				return false, 0, nil, err
			}
			isStatus = nameLen == len(":status") && string(d.cap.b[:7]) == ":status"
		} else {
			isStatus = string(s) == ":status"
		}
	}
	v, huff, p, err := readString(p)
	if err != nil {
		return false, 0, nil, err
	}
	valueLen := len(v)
	if huff && indexing && !isStatus {
		if valueLen, err = d.length(v); err != nil {
			return false, 0, nil, err
		}
	} else if huff && isStatus {
		if valueLen, err = d.huffman(v); err != nil {
			return false, 0, nil, err
		}
		v = d.cap.b[:d.cap.n]
		if valueLen > len(d.cap.b) {
			v = nil // too long to be a code
		}
	}
	if isStatus {
		code = -1
		if valueLen == 3 && len(v) == 3 {
			code = parseStatus(v)
		}
	}
	if indexing {
		e := dynEntry{size: uint32(nameLen+valueLen) + 32, nameLen: uint32(nameLen), isStatus: isStatus}
		if isStatus {
			e.status = int16(code)
		}
		d.add(e)
	}
	return isStatus, code, p, nil
}

// huffman decodes a Huffman-coded string into d.cap and returns its length.
func (d *statusDecoder) huffman(s []byte) (int, error) {
	d.cap.n = 0
	n, err := hpack.HuffmanDecode(&d.cap, s)
	if err != nil {
		return 0, errHPACKHuffman
	}
	return n, nil
}

// parseStatus reads a 3-digit code in 100-599, or returns -1.
func parseStatus[T string | []byte](v T) int {
	if len(v) != 3 || v[0] < '1' || v[0] > '5' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
		return -1
	}
	return int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0')
}

// readVarInt reads an HPACK integer with an n-bit prefix (RFC 7541 section
// 5.1), rejecting values of 63 bits or more as x/net/http2/hpack does.
func readVarInt(n uint, p []byte) (uint64, []byte, error) {
	v, used, err := prefixint.Read(p, n)
	switch err {
	case nil:
		return v, p[used:], nil
	case prefixint.ErrOverflow:
		return 0, nil, errHPACKVarint
	default:
		return 0, nil, errHPACKTruncated
	}
}

// readString reads a string literal: its raw (possibly Huffman-coded)
// bytes and whether they are Huffman-coded.
func readString(p []byte) (s []byte, huff bool, rest []byte, err error) {
	if len(p) == 0 {
		return nil, false, nil, errHPACKTruncated
	}
	huff = p[0]&0x80 != 0
	n, p, err := readVarInt(7, p)
	if err != nil {
		return nil, false, nil, err
	}
	if n > uint64(len(p)) {
		return nil, false, nil, errHPACKTruncated
	}
	return p[:n], huff, p[n:], nil
}
