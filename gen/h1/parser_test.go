package h1

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http/httputil"
	"strings"
	"testing"
)

type parseCase struct {
	name   string
	in     string
	noBody bool
	status int
	body   string // expected body (decoded)
	close  bool
	err    error // expected error (nil = complete)
	eof    bool  // completes only at EOF
	trail  int   // bytes left unconsumed after the response
}

var parseCases = []parseCase{
	{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, body: "hello"},
	{name: "zero length", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200},
	{name: "no reason phrase", in: "HTTP/1.1 204\r\n\r\n", status: 204},
	{name: "bare LF", in: "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", status: 200, body: "hi"},
	{name: "header case and OWS", in: "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:   3  \r\nX-Other: y\r\n\r\nabc", status: 200, body: "abc"},
	{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n", status: 200, body: "hello world"},
	{name: "chunked with trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n", status: 200, body: "0123456789"},
	{name: "chunked upper hex", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nB\r\nhello world\r\n0\r\n\r\n", status: 200, body: "hello world"},
	{name: "connection close", in: "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", status: 503, body: "x", close: true},
	{name: "http/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x"},
	{name: "http/1.0 no length", in: "HTTP/1.0 200 OK\r\n\r\nuntil close", status: 200, body: "until close", close: true, eof: true},
	{name: "http/1.1 no length", in: "HTTP/1.1 200 OK\r\n\r\nabc", status: 200, body: "abc", close: true, eof: true},
	{name: "head", in: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", noBody: true, status: 200},
	{name: "304 has no body", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", status: 304},
	{name: "100 continue first", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", status: 201, body: "ok"},
	{name: "trailing bytes", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxEXTRA", status: 200, body: "x", trail: 5},
	{name: "garbage", in: "garbage\r\n\r\n", err: errStatusLine},
	{name: "http/2 preface", in: "HTTP/2 200\r\n\r\n", err: errStatusLine},
	{name: "short status", in: "HTTP/1.1 20 OK\r\n\r\n", err: errStatusLine},
	{name: "status below 100", in: "HTTP/1.1 099 Low\r\n\r\n", err: errStatusLine},
	{name: "status digit", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: errStatusLine},
	{name: "version digit", in: "HTTP/1.x 200 OK\r\n\r\n", err: errStatusLine},
	{name: "http/1.0 closes", in: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},
	{name: "keep-alive then close", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", close: true},
	{name: "CR in header name", in: "HTTP/1.1 200 OK\r\nX\rY: 1\r\n\r\n", err: errHeaderLine},
	{name: "CR in header value", in: "HTTP/1.1 200 OK\r\nX-Y: a\rb\r\n\r\n", err: errHeaderLine},
	{name: "CR in folded line", in: "HTTP/1.1 200 OK\r\nX-Y: a\r\n b\rc\r\n\r\n", err: errHeaderLine},
	{name: "no colon", in: "HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", err: errHeaderLine},
	{name: "empty name", in: "HTTP/1.1 200 OK\r\n: v\r\n\r\n", err: errHeaderLine},
	{name: "DEL in name", in: "HTTP/1.1 200 OK\r\nX\x7fY: v\r\n\r\n", err: errHeaderLine},
	{name: "bad content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", err: errContentLength},
	{name: "conflicting content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", err: errContentLength},
	{name: "empty content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", err: errContentLength},
	{name: "space in header name", in: "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", err: errHeaderLine},
	{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: errChunkSize},
	{name: "huge chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n", err: errChunkTooLarge},
	{name: "missing chunk CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n", err: errChunkCRLF},
	{name: "101", in: "HTTP/1.1 101 Switching Protocols\r\n\r\n", err: errSwitching},
	{name: "headers too large", in: "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", MaxHeaderBytes) + "\r\n\r\n", err: errHeaderTooLarge},
}

// feed runs the parser over in, split into pieces of at most step bytes.
func feed(t testing.TB, p *Parser, in []byte, step int) (consumed int, done bool, err error) {
	for consumed < len(in) && !done {
		piece := in[consumed:min(consumed+step, len(in))]
		n, d, e := p.Feed(piece)
		consumed += n
		done = d
		if e != nil {
			return consumed, done, e
		}
		if n < len(piece) && !d {
			t.Fatalf("parser stopped early without finishing: consumed %d of %d", n, len(piece))
		}
	}
	return consumed, done, nil
}

func TestParser(t *testing.T) {
	for _, tc := range parseCases {
		var headerBytes int64 = -1 // what the byte machine (step 1) counts
		for _, step := range []int{1, 2, 3, 7, 13, 1 << 20} {
			var body bytes.Buffer
			p := Parser{NoBody: tc.noBody, BodySink: &body}
			n, done, err := feed(t, &p, []byte(tc.in), step)
			if tc.err != nil {
				if err != tc.err {
					t.Errorf("%s (step %d): err %v, want %v", tc.name, step, err, tc.err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (step %d): unexpected error %v", tc.name, step, err)
				continue
			}
			if tc.eof {
				if done {
					t.Errorf("%s (step %d): done before EOF", tc.name, step)
				}
				done, err = p.EOF()
				if !done || err != nil {
					t.Errorf("%s (step %d): EOF gave %v %v", tc.name, step, done, err)
				}
			}
			if !done {
				t.Errorf("%s (step %d): not done", tc.name, step)
				continue
			}
			if got := len(tc.in) - n; got != tc.trail {
				t.Errorf("%s (step %d): %d bytes left, want %d", tc.name, step, got, tc.trail)
			}
			if p.Status != tc.status || body.String() != tc.body || p.Close != tc.close {
				t.Errorf("%s (step %d): status %d body %q close %v; want %d %q %v", tc.name, step, p.Status, body.String(), p.Close, tc.status, tc.body, tc.close)
			}
			if p.BodyBytes != int64(len(tc.body)) {
				t.Errorf("%s: BodyBytes %d, want %d", tc.name, p.BodyBytes, len(tc.body))
			}
			if headerBytes < 0 {
				headerBytes = p.HeaderBytes
			} else if p.HeaderBytes != headerBytes {
				t.Errorf("%s (step %d): HeaderBytes %d, byte at a time %d", tc.name, step, p.HeaderBytes, headerBytes)
			}
		}
	}
}

func TestParserEOFMidBody(t *testing.T) {
	p := Parser{}
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
	if _, done, err := p.Feed(in); done || err != nil {
		t.Fatalf("feed: %v %v", done, err)
	}
	if done, err := p.EOF(); done || err != ErrClosedEarly {
		t.Fatalf("EOF mid-body: %v %v, want ErrClosedEarly", done, err)
	}
}

func TestParserReuse(t *testing.T) {
	var p Parser
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")
	for i := 0; i < 3; i++ {
		if _, done, err := p.Feed(in); !done || err != nil {
			t.Fatalf("round %d: %v %v", i, done, err)
		}
		p.Reset()
	}
}

func TestParserAllocs(t *testing.T) {
	in := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n400\r\n" + strings.Repeat("x", 1024) + "\r\n0\r\n\r\n")
	var p Parser
	n := testing.AllocsPerRun(100, func() {
		p.Reset()
		p.Feed(in)
	})
	if n != 0 {
		t.Fatalf("parser allocates %v times per response", n)
	}
}

func BenchmarkParser1k(b *testing.B) {
	benchParse(b, "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Mon, 30 Nov 2026 12:00:00 GMT\r\nContent-Type: application/json\r\nContent-Length: 1024\r\nConnection: keep-alive\r\n\r\n"+strings.Repeat("x", 1024))
}

// BenchmarkParserNginx1k parses the header set nginx 1.22 sends for a
// static 1 KiB file (what bench-gen.sh's server answers).
func BenchmarkParserNginx1k(b *testing.B) {
	benchParse(b, "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 01 Dec 2026 12:06:20 GMT\r\nContent-Type: application/octet-stream\r\nContent-Length: 1024\r\nLast-Modified: Tue, 01 Dec 2026 12:02:04 GMT\r\nConnection: keep-alive\r\nETag: \"6b0eb73c-400\"\r\nAccept-Ranges: bytes\r\n\r\n"+strings.Repeat("x", 1024))
}

func benchParse(b *testing.B, resp string) {
	in := []byte(resp)
	var p Parser
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		p.Reset()
		if _, done, err := p.Feed(in); !done || err != nil {
			b.Fatal(done, err)
		}
	}
}

// FuzzParser checks that no input panics, that the split of the input
// never changes the outcome, and that consumed bytes stay in range.
func FuzzParser(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		s := int(step)%16 + 1
		var a, b Parser
		h1, h2 := sha256.New(), sha256.New()
		a.BodySink, b.BodySink = h1, h2
		n1, d1, e1 := feed(t, &a, in, len(in)+1)
		n2, d2, e2 := feed(t, &b, in, s)
		if (e1 == nil) != (e2 == nil) || d1 != d2 || (e1 == nil && n1 != n2) {
			t.Fatalf("split changed the outcome: whole (%d %v %v) vs step %d (%d %v %v)", n1, d1, e1, s, n2, d2, e2)
		}
		if n1 > len(in) {
			t.Fatalf("consumed %d > %d", n1, len(in))
		}
		if d1 && e1 == nil && (a.Status != b.Status || !bytes.Equal(h1.Sum(nil), h2.Sum(nil))) {
			t.Fatal("split changed status or body")
		}
	})
}

// FuzzChunked compares the chunked decoder with net/http's on the bodies
// both accept.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte("1;a=b\r\nx\r\n10\r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\n"))
	f.Add([]byte("FFFFFFFFFFFFFFFFFFFFFF\r\n"))
	f.Add([]byte("2\r\nabcd\r\n"))
	f.Fuzz(func(t *testing.T, chunks []byte) {
		in := append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), chunks...)
		var body bytes.Buffer
		p := Parser{BodySink: &body}
		n, done, err := p.Feed(in)
		if err != nil || !done {
			return
		}
		ref, rerr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(chunks)))
		if rerr != nil {
			return // net/http is stricter about some framing; only compare agreed bodies
		}
		if !bytes.Equal(ref, body.Bytes()) {
			t.Fatalf("body %q, net/http decodes %q (consumed %d)", body.Bytes(), ref, n)
		}
	})
}
