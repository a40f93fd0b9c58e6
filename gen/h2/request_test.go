package h2

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

func hdrs(kv ...string) []hpack.HeaderField {
	var f []hpack.HeaderField
	for i := 0; i+1 < len(kv); i += 2 {
		f = append(f, hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return f
}

// decodeAll decodes a block with x/net's decoder.
func decodeAll(t *testing.T, b []byte) []string {
	t.Helper()
	fs, err := hpack.NewDecoder(4096, nil).DecodeFull(b)
	if err != nil {
		t.Fatalf("x/net cannot decode the block: %v", err)
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Name+": "+f.Value)
	}
	return out
}

func TestTemplateFields(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Scheme: "http", Authority: "127.0.0.1:8080"},
			":method: GET|:scheme: http|:authority: 127.0.0.1:8080|:path: /|user-agent: loadlab"},
		{Request{Method: "POST", Scheme: "https", Authority: "a", Path: "/echo?x=1", Body: []byte("hello"),
			Header: hdrs("Host", "example.com", "X-Test", " v ", "Connection", "close", "Keep-Alive", "1",
				"Transfer-Encoding", "chunked", "Upgrade", "h2c", "TE", "gzip", "Content-Length", "99", "User-Agent", "me")},
			":method: POST|:scheme: https|:authority: example.com|:path: /echo?x=1|x-test: v|user-agent: me|content-length: 5"},
		{Request{Method: "PUT", Scheme: "http", Authority: "a", Header: hdrs("te", "trailers", "accept-encoding", "gzip, deflate")},
			":method: PUT|:scheme: http|:authority: a|:path: /|te: trailers|accept-encoding: gzip, deflate|user-agent: loadlab|content-length: 0"},
	} {
		tmpl, err := NewTemplate(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(decodeAll(t, tmpl.Block()), "|"); got != tc.want {
			t.Errorf("fields\n got %s\nwant %s", got, tc.want)
		}
		if !bytes.Equal(tmpl.Body(), tc.req.Body) {
			t.Errorf("body %q", tmpl.Body())
		}
		checkStateless(t, tmpl.Block())
	}
}

// checkStateless walks a block and fails on any representation that
// touches the dynamic table.
func checkStateless(t *testing.T, b []byte) {
	t.Helper()
	for len(b) > 0 {
		var err error
		switch c := b[0]; {
		case c&0x80 != 0:
			var idx uint64
			idx, b, err = readVarInt(7, b)
			if idx > staticLen {
				t.Fatalf("dynamic index %d", idx)
			}
		case c&0xc0 == 0x40, c&0xe0 == 0x20:
			t.Fatalf("representation %#x uses the dynamic table", c)
		default:
			var idx uint64
			idx, b, err = readVarInt(4, b)
			if idx > staticLen {
				t.Fatalf("dynamic name index %d", idx)
			}
			if idx == 0 {
				_, _, b, err = readString(b)
			}
			if err == nil {
				_, _, b, err = readString(b)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestTemplateSensitiveNeverIndexed(t *testing.T) {
	tmpl, err := NewTemplate(Request{Scheme: "http", Authority: "a", Header: []hpack.HeaderField{{Name: "authorization", Value: "Bearer x", Sensitive: true}}})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := hpack.NewDecoder(4096, nil).DecodeFull(tmpl.Block())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Name == "authorization" && !f.Sensitive {
			t.Fatal("authorization not sent never-indexed")
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for _, r := range []Request{
		{Scheme: "ftp", Authority: "a"},
		{Scheme: "http"},
		{Scheme: "http", Authority: "a b\n"},
		{Scheme: "http", Authority: "a", Method: "GE T"},
		{Scheme: "http", Authority: "a", Path: "/a b"},
		{Scheme: "http", Authority: "a", Header: hdrs(":path", "/x")},
		{Scheme: "http", Authority: "a", Header: hdrs("bad name", "x")},
		{Scheme: "http", Authority: "a", Header: hdrs("x", "a\r\nb")},
	} {
		if _, err := NewTemplate(r); err == nil {
			t.Errorf("NewTemplate(%+v) accepted", r)
		}
	}
}

func TestVarIntRoundTrip(t *testing.T) {
	for _, n := range []uint{4, 5, 6, 7} {
		for _, v := range []uint64{0, 1, 14, 15, 16, 30, 31, 62, 63, 64, 126, 127, 128, 300, 1 << 20, 1<<40 + 5} {
			b := appendVarInt(nil, n, 0, v)
			got, rest, err := readVarInt(n, b)
			if err != nil || got != v || len(rest) != 0 {
				t.Fatalf("prefix %d value %d: got %d rest %d err %v", n, v, got, len(rest), err)
			}
		}
	}
}
