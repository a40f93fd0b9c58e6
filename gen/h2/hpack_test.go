package h2

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/net/http2/hpack"
)

func TestStatusDecoderRecordedNginx(t *testing.T) {
	d := newStatusDecoder(DefaultHeaderTableSize)
	ok, bad := unhex(nginx1kHeaders)[frameHeaderLen:], unhex(nginx502Headers)[frameHeaderLen:]
	for i, tc := range []struct {
		b    []byte
		want int
	}{{ok, 200}, {bad, 502}, {ok, 200}, {bad, 502}} {
		if st, err := d.decode(tc.b); err != nil || st != tc.want {
			t.Fatalf("block %d: status %d err %v, want %d", i, st, err, tc.want)
		}
	}
	// nginx indexes every field and refers to none: the table fills up
	// and evicts, staying within its 4096 bytes.
	if d.size > DefaultHeaderTableSize || d.n == 0 {
		t.Fatalf("table %d bytes in %d entries", d.size, d.n)
	}
}

// TestStatusDecoderEviction fills the table through x/net's encoder and
// checks the size accounting and that evicted entries cannot be referred
// to.
func TestStatusDecoderEviction(t *testing.T) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	d := newStatusDecoder(DefaultHeaderTableSize)
	size, n := 0, 0
	for i := range 200 {
		buf.Reset()
		name, value := fmt.Sprintf("x-field-%03d", i), "some value of some length"
		enc.WriteField(hpack.HeaderField{Name: ":status", Value: "299"})
		enc.WriteField(hpack.HeaderField{Name: name, Value: value})
		if i == 0 {
			size, n = size+len(":status299")+32, n+1
		}
		size, n = size+len(name)+len(value)+32, n+1
		for size > DefaultHeaderTableSize { // the oldest x-field goes first, then :status
			size -= len("x-field-000") + len(value) + 32
			n--
		}
		st, err := d.decode(buf.Bytes())
		if err != nil || st != 299 {
			t.Fatalf("block %d: status %d err %v", i, st, err)
		}
	}
	if int(d.size) > DefaultHeaderTableSize || d.n > DefaultHeaderTableSize/32 {
		t.Fatalf("table %d bytes, %d entries", d.size, d.n)
	}
	// A reference just past the last entry is invalid.
	past := appendVarInt(nil, 7, 0x80, uint64(staticLen+d.n+1))
	if _, err := d.decode(past); err != errHPACKIndex {
		t.Fatalf("reference to entry %d of %d: %v", d.n+1, d.n, err)
	}
	last := appendVarInt(nil, 7, 0x80, uint64(staticLen+d.n))
	if _, err := d.decode(last); err != nil {
		t.Fatalf("reference to the oldest entry: %v", err)
	}
	// A size update to 0 empties the table; one above 4096 is refused.
	if _, err := d.decode([]byte{0x20}); err != nil || d.n != 0 || d.size != 0 {
		t.Fatalf("size update to 0: %v, %d entries", err, d.n)
	}
	if _, err := d.decode(appendVarInt(nil, 5, 0x20, 4097)); err != errHPACKSize {
		t.Fatalf("size update above the advertised maximum: %v", err)
	}
}

func TestStatusDecoderLiteralForms(t *testing.T) {
	huff := hpack.AppendHuffmanString(nil, "503")
	for _, tc := range []struct {
		name string
		b    []byte
		want int
		err  error
	}{
		{"static 404", []byte{0x8d}, 404, nil},
		{"literal without indexing, raw", []byte{0x08, 3, '2', '0', '1'}, 201, nil},
		{"never indexed, Huffman", append([]byte{0x18, 0x80 | byte(len(huff))}, huff...), 503, nil},
		{"new name :status", []byte{0x00, 7, ':', 's', 't', 'a', 't', 'u', 's', 3, '3', '0', '2'}, 302, nil},
		{"indexing, then referred to", []byte{0x48, 3, '4', '2', '9', 0xbe}, 0, errStatusPos},
		{"no status", []byte{0x9f}, 0, nil},
		{"status 99", []byte{0x08, 2, '9', '9'}, 0, errStatusValue},
		{"status 600", []byte{0x08, 3, '6', '0', '0'}, 0, errStatusValue},
		{"bad Huffman", []byte{0x08, 0x81, 0xff}, 0, errHPACKHuffman},
		{"varint overflow", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, errHPACKVarint},
	} {
		d := newStatusDecoder(DefaultHeaderTableSize)
		st, err := d.decode(tc.b)
		if st != tc.want || err != tc.err {
			t.Errorf("%s: status %d err %v, want %d %v", tc.name, st, err, tc.want, tc.err)
		}
	}
}
