package h2

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Recorded from nginx 1.22.1 (Debian 12) over h2c: its SETTINGS,
// WINDOW_UPDATE and SETTINGS ACK, then the HEADERS of the second response
// to GET /1k (a 1024-byte static file) and of a "return 502". nginx sends
// every field as a literal with incremental indexing and never refers to
// the dynamic table.
const (
	nginxPreface = "000012040000000000000300000080000400010000000500ffffff" +
		"0000040800000000007fff0000" + "000000040100000000"
	nginx1kHeaders = "00006c010400000003887689aa6355e580ae212e1f6196df697e940054be52282009c500f5c69cb821298b46ff" +
		"5f87497ca58ae819aa5c04313032346c96df697e940054be52282009c500f5c69cb820a98b46ff00832a47378bfe5c8c0579f6e4" +
		"59a003f9008919085ad2b583aa62a3848fd24a8f"
	nginx502Headers = "00003601040000000548033530327689aa6355e580ae212e1f6196df697e940054be52282009c500f5c69cb821298b46ff" +
		"5f87497ca589d34d1f5c03313537"
)

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// replay is one response's frames whose stream id can be rewritten in
// place, so a test feeds the same recorded bytes for stream after stream.
type replay struct {
	b    []byte
	offs []int // frame header offsets
}

// newReplay keeps the frames of stream id from the server bytes b.
func newReplay(b []byte, id uint32) *replay {
	r := &replay{}
	for len(b) >= frameHeaderLen {
		fh := parseFrameHeader((*[frameHeaderLen]byte)(b))
		n := frameHeaderLen + fh.length
		if fh.stream == id {
			r.offs = append(r.offs, len(r.b))
			r.b = append(r.b, b[:n]...)
		}
		b = b[n:]
	}
	return r
}

// set rewrites the stream id of every frame.
func (r *replay) set(id uint32) []byte {
	for _, o := range r.offs {
		binary.BigEndian.PutUint32(r.b[o+5:], id)
	}
	return r.b
}

// nginxReplay is nginx's response: the recorded HEADERS and a DATA frame
// with the body length its content-length says.
func nginxReplay(headers string, body int) *replay {
	b := unhex(headers)
	id := binary.BigEndian.Uint32(b[5:9])
	d := appendFrameHeader(nil, body, http2.FrameData, http2.FlagDataEndStream, id)
	b = append(b, append(d, bytes.Repeat([]byte("x"), body)...)...)
	return newReplay(b, id)
}

// recordXNet runs three requests for path against x/net's server and
// returns its bytes. Its HPACK encoder indexes every field, so the third
// response refers to the dynamic table only; it is recorded again if a
// new Date was indexed in between.
func recordXNet(t testing.TB, path string) []byte {
	t.Helper()
	var count atomic.Int64
	s := testutil.StartH2Server(t, testHandler(&count), testutil.H2Options{Pipe: true})
	for range 3 {
		res := drive(t, s.Dial, Config{MaxStreams: 1}, Request{Path: path}, 3, nil, nil)
		rp := newReplay(res.serverSeen, 5)
		if !inserts(rp) {
			return res.serverSeen
		}
	}
	t.Fatal("x/net's server kept indexing new fields")
	return nil
}

// inserts reports whether a replay's header blocks add to the dynamic
// table (replaying them would then shift the server's indexes).
func inserts(rp *replay) bool {
	for _, o := range rp.offs {
		fh := parseFrameHeader((*[frameHeaderLen]byte)(rp.b[o:]))
		if fh.typ != http2.FrameHeaders {
			continue
		}
		p := rp.b[o+frameHeaderLen : o+frameHeaderLen+fh.length]
		for len(p) > 0 {
			var err error
			switch b := p[0]; {
			case b&0x80 != 0:
				_, p, err = readVarInt(7, p)
			case b&0xc0 == 0x40:
				return true
			default:
				var idx uint64
				idx, p, err = readVarInt(4, p)
				if err == nil && idx == 0 {
					_, _, p, err = readString(p)
				}
				if err == nil {
					_, _, p, err = readString(p)
				}
			}
			if err != nil {
				panic(err)
			}
		}
	}
	return false
}

// steady returns a Conn that has read the recorded server bytes all (its
// preface, then each response, on streams it opened one at a time) and a
// function that runs one round: start every free stream, write, and feed
// each the last recorded response.
func steady(t testing.TB, streams int, all []byte, hashes bool) (*Conn, *recorder, func()) {
	t.Helper()
	tmpl, err := NewTemplate(Request{Scheme: "http", Authority: "127.0.0.1", Path: "/1k"})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(streams, false, hashes)
	c, err := NewConn(Config{MaxStreams: streams}, tmpl, rec)
	if err != nil {
		t.Fatal(err)
	}
	c.Wrote(len(c.Pending()))
	if err := c.Feed(newReplay(all, 0).b); err != nil {
		t.Fatal(err)
	}
	var rp *replay
	for _, id := range streamIDs(all) {
		rp = newReplay(all, id)
		slot := c.Start()
		if err := c.Feed(rp.set(c.StreamID(slot))); err != nil {
			t.Fatal(err)
		}
	}
	ids := make([]uint32, 0, streams)
	round := func() {
		ids = ids[:0]
		for c.Free() > 0 {
			ids = append(ids, c.StreamID(c.Start()))
		}
		c.Wrote(len(c.Pending()))
		for _, id := range ids {
			if err := c.Feed(rp.set(id)); err != nil {
				t.Fatal(err)
			}
		}
		c.Wrote(len(c.Pending()))
	}
	round()
	return c, rec, round
}

// streamIDs lists the non-zero stream ids of server bytes b in order.
func streamIDs(b []byte) []uint32 {
	var ids []uint32
	seen := map[uint32]bool{0: true}
	for len(b) >= frameHeaderLen {
		fh := parseFrameHeader((*[frameHeaderLen]byte)(b))
		if !seen[fh.stream] {
			seen[fh.stream] = true
			ids = append(ids, fh.stream)
		}
		b = b[frameHeaderLen+fh.length:]
	}
	return ids
}

type allocCase struct {
	name   string
	all    []byte // recorded server bytes
	body   int
	status int
}

func allocCases(t testing.TB) []allocCase {
	nginx := func(headers string, body int) []byte {
		return append(unhex(nginxPreface), nginxReplay(headers, body).b...)
	}
	return []allocCase{
		{"x/net server 1k", recordXNet(t, "/1k"), 1024, 200},
		{"x/net server 1m", recordXNet(t, "/1m"), 1 << 20, 200},
		{"x/net server 418", recordXNet(t, "/status/418"), 0, 418},
		{"nginx 1k", nginx(nginx1kHeaders, 1024), 1024, 200},
		{"nginx 502", nginx(nginx502Headers, 157), 157, 502},
	}
}

func TestZeroAllocsPerRequest(t *testing.T) {
	if testutil.Race {
		t.Skip("the race detector allocates")
	}
	for _, tc := range allocCases(t) {
		for _, streams := range []int{1, 10} {
			c, rec, round := steady(t, streams, tc.all, true)
			before := rec.done
			allocs := testing.AllocsPerRun(50, round)
			if allocs != 0 {
				t.Errorf("%s, %d streams: %.2f allocations per round of %d requests", tc.name, streams, allocs, streams)
			}
			if got := rec.done - before; got != 51*streams || rec.status[0] != tc.status || c.Active() != 0 {
				t.Fatalf("%s: %d responses (want %d), status %d", tc.name, got, 51*streams, rec.status[0])
			}
			if want := int64(tc.body) * int64(rec.done); rec.bodyBytes != want {
				t.Fatalf("%s: %d body bytes, want %d", tc.name, rec.bodyBytes, want)
			}
		}
	}
}

func BenchmarkConn(b *testing.B) {
	for _, tc := range allocCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			const streams = 10
			_, _, round := steady(b, streams, tc.all, false)
			b.ReportAllocs()
			b.SetBytes(int64(tc.body))
			b.ResetTimer()
			for i := 0; i < b.N; i += streams {
				round()
			}
		})
	}
}

// BenchmarkXNetFramer reads the same responses with x/net's Framer (frame
// reuse on, HPACK decoding by its MetaHeadersFrame) to show why this
// package has its own reader: it allocates per HEADERS frame.
func BenchmarkXNetFramer(b *testing.B) {
	for _, tc := range allocCases(b) {
		if !strings.HasPrefix(tc.name, "nginx") {
			continue // x/net's replays refer to a dynamic table a fresh decoder lacks
		}
		b.Run(tc.name, func(b *testing.B) {
			ids := streamIDs(tc.all)
			rp := newReplay(tc.all, ids[len(ids)-1])
			r := bytes.NewReader(nil)
			fr := http2.NewFramer(nil, r)
			fr.SetReuseFrames()
			fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r.Reset(rp.set(uint32(2*i + 1)))
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						break
					}
					if d, ok := f.(*http2.DataFrame); ok {
						_ = d.Data()
					}
				}
			}
		})
	}
}

// BenchmarkXNetHPACKDecoder decodes nginx's response headers with x/net's
// Decoder, emitting only :status (what the generator needs).
func BenchmarkXNetHPACKDecoder(b *testing.B) {
	block := unhex(nginx1kHeaders)[frameHeaderLen:]
	var d *hpack.Decoder
	d = hpack.NewDecoder(4096, func(f hpack.HeaderField) { d.SetEmitEnabled(false) })
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.SetEmitEnabled(true)
		if _, err := d.Write(block); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// BenchmarkStatusDecoder decodes the same block with this package's
// decoder.
func BenchmarkStatusDecoder(b *testing.B) {
	block := unhex(nginx1kHeaders)[frameHeaderLen:]
	d := newStatusDecoder(DefaultHeaderTableSize)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if st, err := d.decode(block); err != nil || st != 200 {
			b.Fatal(st, err)
		}
	}
}
