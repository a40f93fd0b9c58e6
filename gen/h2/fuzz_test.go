package h2

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzFeed feeds arbitrary server bytes to a Conn with one stream open, in
// chunks of data[0] bytes, starting streams between chunks as a closed loop
// does. It must never panic, every started stream must end at most once,
// and everything the Conn writes must be valid HTTP/2.
//
// The seeds are in testdata/fuzz/FuzzFeed (see TestWriteFuzzCorpus).
func FuzzFeed(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		chunk := int(data[0])%64 + 1
		data = data[1:]
		tmpl, err := NewTemplate(Request{Method: "POST", Scheme: "http", Authority: "a", Body: make([]byte, 70000)})
		if err != nil {
			t.Fatal(err)
		}
		rec := newRecorder(4, false, false)
		c, err := NewConn(Config{MaxStreams: 4, MaxHeaderBytes: 4096}, tmpl, rec)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		started := 0
		for len(data) > 0 {
			for c.Free() > 0 && started < 50 {
				c.Start()
				started++
			}
			out.Write(c.Pending())
			c.Wrote(len(c.Pending()))
			n := min(chunk, len(data))
			err := c.Feed(data[:n])
			data = data[n:]
			if ended := rec.done + rec.resets + rec.refused; ended+c.Active() != started {
				t.Fatalf("%d started, %d ended, %d busy", started, ended, c.Active())
			}
			if err != nil {
				break
			}
		}
		out.Write(c.Pending())
		frames(t, out.Bytes()) // fails on invalid output
	})
}

// FuzzHPACK decodes a sequence of header blocks (each prefixed with its
// length byte) with statusDecoder and with x/net's Decoder. Whenever x/net
// decodes a block, statusDecoder must agree on :status (its value, or the
// error of a misplaced or malformed one), so its table stays in step.
//
// The seeds are in testdata/fuzz/FuzzHPACK.
func FuzzHPACK(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ours := newStatusDecoder(DefaultHeaderTableSize)
		ref := hpack.NewDecoder(DefaultHeaderTableSize, nil)
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			block := data[1 : 1+n]
			data = data[1+n:]
			fields, refErr := ref.DecodeFull(block)
			status, err := ours.decode(block)
			if refErr != nil {
				// x/net stops at its first error. A bad index is checked by
				// both (every field before it was valid for both); other
				// errors may sit in strings statusDecoder skips.
				var ie hpack.InvalidIndexError
				if errors.As(refErr, &ie) && err == nil {
					t.Fatalf("block %x: x/net: %v; statusDecoder accepted it (status %d)", block, refErr, status)
				}
				return // the tables may differ from here on
			}
			want, wantErr := 0, error(nil)
			for i, fl := range fields {
				if fl.Name != ":status" {
					continue
				}
				switch {
				case i > 0:
					wantErr = errStatusPos
				case parseStatus(fl.Value) < 0:
					wantErr = errStatusValue
				default:
					want = parseStatus(fl.Value)
				}
				if wantErr != nil {
					break
				}
			}
			if err != wantErr || (err == nil && status != want) {
				t.Fatalf("block %x: got status %d err %v; x/net decoded %v (want %d, %v)", block, status, err, fields, want, wantErr)
			}
			if err != nil {
				return
			}
		}
	})
}

// feedSeeds are server byte streams for FuzzFeed (chunk byte first).
func feedSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	add := func(chunk byte, b []byte) { seeds = append(seeds, append([]byte{chunk}, b...)) }
	add(14, serverTalk()) // 15-byte chunks: SETTINGS alone first
	add(63, serverTalk())
	sc := newScript().settings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 2},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
	must(sc.fr.WriteWindowUpdate(1, 5000))
	must(sc.fr.WriteWindowUpdate(0, 100000))
	sc.headers(1, 200, false, "content-type", "text/plain")
	sc.data(1, []byte("partial"), false)
	must(sc.fr.WriteRSTStream(1, http2.ErrCodeInternal))
	must(sc.fr.WriteGoAway(1, http2.ErrCodeNo, []byte("bye")))
	add(10, sc.bytes())
	sc = newScript().settings()
	sc.headers(1, 503, false, "retry-after", "1")
	must(sc.fr.WriteDataPadded(1, true, []byte("busy"), make([]byte, 9)))
	must(sc.fr.WriteRSTStream(3, http2.ErrCodeRefusedStream))
	must(sc.fr.WritePing(false, [8]byte{9}))
	add(0, sc.bytes())
	nginx := append(unhex(nginxPreface), nginxReplay(nginx1kHeaders, 1024).set(1)...)
	add(40, nginx)
	add(40, append(unhex(nginxPreface), nginxReplay(nginx502Headers, 157).set(1)...))
	return seeds
}

// hpackSeeds are block sequences for FuzzHPACK: nginx's blocks, and blocks
// from x/net's encoder (which indexes and refers to its table), with a
// table size update.
func hpackSeeds() [][]byte {
	seq := func(blocks ...[]byte) []byte {
		var b []byte
		for _, blk := range blocks {
			if len(blk) > 255 {
				panic("seed block too long")
			}
			b = append(b, byte(len(blk)))
			b = append(b, blk...)
		}
		return b
	}
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	block := func(status string, kv ...string) []byte {
		buf.Reset()
		if status != "" {
			enc.WriteField(hpack.HeaderField{Name: ":status", Value: status})
		}
		for i := 0; i+1 < len(kv); i += 2 {
			enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
		return bytes.Clone(buf.Bytes())
	}
	ng1k, ng502 := unhex(nginx1kHeaders)[frameHeaderLen:], unhex(nginx502Headers)[frameHeaderLen:]
	var seeds [][]byte
	seeds = append(seeds, seq(ng1k, ng1k, ng502, ng1k))
	seeds = append(seeds, seq(block("200", "content-type", "text/html", "x-a", "1"), block("418", "x-a", "1"), block("418", "x-a", "1"), block("", "grpc-status", "0")))
	enc.SetMaxDynamicTableSizeLimit(100)
	enc.SetMaxDynamicTableSize(64)
	seeds = append(seeds, seq(block("204", "x-long-name-here", "with a value"), block("302", "location", "/a"), block("302", "location", "/b")))
	// Many insertions: statuses stay referenced while unique fields push
	// old entries out, so eviction and the ring's wrap-around matter.
	enc = hpack.NewEncoder(&buf)
	var many [][]byte
	for i := range 300 {
		many = append(many, block([]string{"201", "202", "418", "502", "503"}[i%5], fmt.Sprintf("x-unique-%d", i), "value-that-takes-room-in-the-table"))
	}
	seeds = append(seeds, seq(many...))
	seeds = append(seeds, seq([]byte{0x88, 0x08, 3, '2', '0', '0'}, []byte{0x3f, 0xe1, 0x1f}, []byte{0x48, 0x82, 0x64, 0x02}))
	return seeds
}

// TestWriteFuzzCorpus writes the seeds to testdata/fuzz when
// H2_WRITE_CORPUS=1 (run it after changing the seeds; the files are
// committed so `go test` replays them).
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("H2_WRITE_CORPUS") != "1" {
		t.Skip("set H2_WRITE_CORPUS=1 to rewrite testdata/fuzz")
	}
	write := func(fuzz string, seeds [][]byte) {
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%02d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("FuzzFeed", feedSeeds(t))
	write("FuzzHPACK", hpackSeeds())
}
