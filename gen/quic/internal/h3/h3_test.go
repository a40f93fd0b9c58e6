package h3

import (
	"bytes"
	"github.com/loadlab/loadlab/gen/quic/internal/wire"
	"testing"

	"github.com/quic-go/qpack"
	"golang.org/x/net/http2/hpack"
)

// The request section decodes with quic-go's QPACK decoder: methods in
// the static table and not, paths, fields.
func TestRequestSectionDecodes(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		fields       []Field
	}{
		{"", "/", nil},
		{"GET", "/a/long/path?x=1", nil},
		{"HEAD", "/", []Field{{"user-agent", "loadlab"}}},
		{"PURGE", "/x", []Field{{"x-a", "1"}, {"accept", "*/*"}, {"x-empty", ""}}},
	} {
		sec := AppendRequestSection(nil, tc.method, "localhost:4433", tc.path, tc.fields)
		var got []qpack.HeaderField
		dec := qpack.NewDecoder()
		fn := dec.Decode(sec)
		for {
			f, err := fn()
			if err != nil {
				break
			}
			got = append(got, f)
		}
		want := tc.method
		if want == "" {
			want = "GET"
		}
		if len(got) != 4+len(tc.fields) {
			t.Fatalf("%+v: decoded %v", tc, got)
		}
		pseudo := map[string]string{}
		for _, f := range got[:4] {
			pseudo[f.Name] = f.Value
		}
		if pseudo[":method"] != want || pseudo[":scheme"] != "https" || pseudo[":authority"] != "localhost:4433" || pseudo[":path"] != tc.path {
			t.Errorf("%+v: %v", tc, got)
		}
		for i, f := range tc.fields {
			if got[4+i].Name != f.Name || got[4+i].Value != f.Value {
				t.Errorf("%+v: field %d is %v", tc, i, got[4+i])
			}
		}
	}
}

// encodeResponse encodes fields with quic-go's QPACK encoder (which uses
// static references, name references and Huffman where shorter).
func encodeResponse(t testing.TB, fields ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i < len(fields); i += 2 {
		if err := enc.WriteField(qpack.HeaderField{Name: fields[i], Value: fields[i+1]}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestDecodeStatus(t *testing.T) {
	var hb bytes.Buffer
	for _, c := range []struct {
		fields []string
		want   int
	}{
		{[]string{":status", "200", "content-type", "text/plain"}, 200},
		{[]string{":status", "404"}, 404},
		{[]string{":status", "418", "x-custom-header", "value"}, 418},
		{[]string{":status", "299"}, 299},
	} {
		got, err := DecodeStatus(encodeResponse(t, c.fields...), &hb)
		if err != nil || got != c.want {
			t.Errorf("%v: %d %v", c.fields, got, err)
		}
	}
	// Literal name ":status", not Huffman-coded, value Huffman-coded ("201").
	enc := hpack.AppendHuffmanString(nil, "201")
	sec := append([]byte{0, 0, 0x27, 0}, ":status"...)
	sec = append(sec, 0x80|byte(len(enc)))
	sec = append(sec, enc...)
	if got, err := DecodeStatus(sec, &hb); err != nil || got != 201 {
		t.Errorf("literal name, Huffman value: %d %v", got, err)
	}
	if _, err := DecodeStatus([]byte{1, 0, 0xd9}, &hb); err != ErrDynamic {
		t.Errorf("required insert count 1: %v", err)
	}
	if _, err := DecodeStatus([]byte{0, 0, 0xdf}, &hb); err != ErrNoStatus {
		t.Errorf("no status: %v", err)
	}
}

func TestResponseFeed(t *testing.T) {
	sec := encodeResponse(t, ":status", "200")
	var stream []byte
	stream = AppendHeadersFrame(stream, encodeResponse(t, ":status", "103"))
	stream = AppendHeadersFrame(stream, sec)
	stream = append(stream, 0x21, 3, 'x', 'y', 'z') // a reserved frame type: skipped
	stream = append(stream, frameData, 5, 'h', 'e', 'l', 'l', 'o')
	stream = append(stream, frameData, 0x40, 3, 'a', 'b', 'c')
	for step := 1; step <= len(stream); step++ {
		var r Response
		var body bytes.Buffer
		r.Body = &body
		for i := 0; i < len(stream); i += step {
			end := min(i+step, len(stream))
			if err := r.Feed(stream[i:end], end == len(stream)); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if !r.Done || r.Status != 200 || r.Bytes != 8 || body.String() != "helloabc" {
			t.Fatalf("step %d: %+v body %q", step, r, body.String())
		}
	}
	var r Response
	if err := r.Feed(stream[:len(stream)-1], true); err != ErrTruncated {
		t.Errorf("truncated: %v", err)
	}
	r.Reset()
	if err := r.Feed([]byte{frameData, 1, 'x'}, false); err != ErrDataFirst {
		t.Errorf("DATA first: %v", err)
	}
}

func FuzzDecodeStatus(f *testing.F) {
	f.Add([]byte{0, 0, 0xd9})
	f.Add([]byte{0, 0, 0x5f, 0x09, 3, '2', '0', '0'})
	f.Add(append([]byte{0, 0, 0x27, 0}, ":status\x03200"...))
	var hb bytes.Buffer
	f.Fuzz(func(t *testing.T, b []byte) {
		DecodeStatus(b, &hb)
	})
}

func FuzzResponse(f *testing.F) {
	f.Add([]byte{1, 3, 0, 0, 0xd9, 0, 2, 'o', 'k'})
	f.Add([]byte{1, 3, 0, 0, 0xd9, 0x21, 1, 0, 0, 0x40, 1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Response
		step := 1 + len(b)%5
		for i := 0; i < len(b); i += step {
			end := min(i+step, len(b))
			if r.Feed(b[i:end], end == len(b)) != nil {
				return
			}
		}
	})
}

// The server's control stream, fed whole and one byte at a time: its
// type, SETTINGS, an unknown (reserved) frame, GOAWAY 8 then GOAWAY 4.
func TestControlGoAway(t *testing.T) {
	s := []byte{0x00, 0x04, 0x02, 0x01, 0x00, 0x40, 0x21, 0x01, 0xff, 0x07, 0x01, 0x08, 0x07, 0x02, 0x40, 0x04}
	for _, step := range []int{len(s), 1, 2} {
		var c Control
		for i := 0; i < len(s); i += step {
			if err := c.Feed(s[i:min(i+step, len(s))]); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if i+step <= 11 && c.GoAway {
				t.Fatalf("step %d: GOAWAY before its frame ended", step)
			}
		}
		if !c.GoAway || c.GoAwayID != 4 || c.NotControl {
			t.Fatalf("step %d: %+v", step, c)
		}
	}
	var c Control
	if err := c.Feed([]byte{0x02, 0x07, 0x01, 0x08}); err != nil || !c.NotControl || c.GoAway {
		t.Fatalf("a QPACK encoder stream parsed as control: %v %+v", err, c)
	}
	for _, bad := range [][]byte{{0x00, 0x07, 0x00}, {0x00, 0x07, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0x00, 0x07, 0x02, 0x08, 0x00}} {
		var c Control
		if err := c.Feed(bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}

// controlOracle parses a whole control stream the plain way: its type,
// then frames (type, length, payload); a GOAWAY's payload is exactly one
// varint of at most 8 bytes. It returns what Control must end with: not a
// control stream, the last GOAWAY's ID, or that the stream is malformed
// (complete: the bytes end between frames).
func controlOracle(s []byte) (notControl, goAway bool, id uint64, bad bool) {
	t, n := wire.ReadVarint(s)
	if n == 0 {
		return false, false, 0, false
	}
	if t != streamControl {
		return true, false, 0, false
	}
	s = s[n:]
	for len(s) > 0 {
		ft, n1 := wire.ReadVarint(s)
		if n1 == 0 {
			return false, goAway, id, false // a header cut short: more may come
		}
		l, n2 := wire.ReadVarint(s[n1:])
		if n2 == 0 {
			return false, goAway, id, false
		}
		s = s[n1+n2:]
		if ft == frameGoAway && (l == 0 || l > 8) {
			return false, goAway, id, true
		}
		if uint64(len(s)) < l {
			return false, goAway, id, false // a payload cut short
		}
		if ft == frameGoAway {
			v, nv := wire.ReadVarint(s[:l])
			if nv == 0 || uint64(nv) != l {
				return false, goAway, id, true
			}
			goAway, id = true, v
		}
		s = s[l:]
	}
	return false, goAway, id, false
}

// FuzzControl feeds the server's control stream (stream type, frames,
// GOAWAYs, anything) to Control whole and cut in pieces the input chooses:
// no panic, the same outcome either way, and the outcome of the plain
// parse (controlOracle).
func FuzzControl(f *testing.F) {
	f.Add([]byte{0x00, 0x04, 0x02, 0x01, 0x00, 0x40, 0x21, 0x01, 0xff, 0x07, 0x01, 0x08, 0x07, 0x02, 0x40, 0x04}, uint8(1))
	f.Add([]byte{0x02, 0x07, 0x01, 0x08}, uint8(2))
	f.Add([]byte{0x00, 0x07, 0x00}, uint8(3))
	f.Add([]byte{0x00, 0x07, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint8(1))
	f.Add([]byte{0x00, 0x07, 0x02, 0x08, 0x00}, uint8(4))
	f.Add([]byte{0x00, 0x07, 0x08, 0xc0, 0, 0, 0, 0, 0, 0, 0x05}, uint8(5))
	f.Add([]byte{0x40, 0x00, 0x80, 0x00, 0x00, 0x21, 0x00}, uint8(2))
	f.Fuzz(func(t *testing.T, s []byte, step uint8) {
		var whole Control
		werr := whole.Feed(s)
		var cut Control
		var cerr error
		k := int(step%16) + 1
		for i := 0; i < len(s) && cerr == nil; i += k {
			cerr = cut.Feed(s[i:min(i+k, len(s))])
		}
		if (werr == nil) != (cerr == nil) || whole.NotControl != cut.NotControl || whole.GoAway != cut.GoAway || whole.GoAwayID != cut.GoAwayID {
			t.Fatalf("whole: %v %+v; in %d-byte pieces: %v %+v", werr, whole, k, cerr, cut)
		}
		notControl, goAway, id, bad := controlOracle(s)
		if bad != (werr != nil) || !bad && (notControl != whole.NotControl || goAway != whole.GoAway || id != whole.GoAwayID) {
			t.Fatalf("Control: %v %+v; the plain parse: not control %v, GOAWAY %v %d, malformed %v", werr, whole, notControl, goAway, id, bad)
		}
	})
}
