package h2

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// event is one Handler call, for tests that check the order.
type event struct {
	kind   string // response, body, done, reset, refused, goaway
	slot   int
	status int
	n      int // body bytes
	code   http2.ErrCode
	last   uint32
}

func (e event) String() string {
	switch e.kind {
	case "response":
		return fmt.Sprintf("response(%d,%d)", e.slot, e.status)
	case "body":
		return fmt.Sprintf("body(%d,%d)", e.slot, e.n)
	case "reset", "refused":
		return fmt.Sprintf("%s(%d,%v)", e.kind, e.slot, e.code)
	case "goaway":
		return fmt.Sprintf("goaway(%d,%v)", e.last, e.code)
	}
	return fmt.Sprintf("%s(%d)", e.kind, e.slot)
}

// recorder is a Handler that keeps every event (merging consecutive body
// events of one slot) and per-slot body digests.
type recorder struct {
	events []event
	keep   bool // keep events (off in allocation tests)
	status []int
	bytes  []int64
	sums   []hash.Hash
	want   []byte // with sums: every body must hash to this
	// mismatches counts bodies whose digest differs from want.
	mismatches int
	// counts
	responses, done, resets, refused, goaways int
	bodyBytes                                 int64
}

func newRecorder(slots int, keep, hashes bool) *recorder {
	r := &recorder{keep: keep, status: make([]int, slots), bytes: make([]int64, slots)}
	if hashes {
		r.sums = make([]hash.Hash, slots)
		for i := range r.sums {
			r.sums[i] = sha256.New()
		}
	}
	return r
}

func (r *recorder) add(e event) {
	if !r.keep {
		return
	}
	if n := len(r.events); e.kind == "body" && n > 0 && r.events[n-1].kind == "body" && r.events[n-1].slot == e.slot {
		r.events[n-1].n += e.n
		return
	}
	r.events = append(r.events, e)
}

func (r *recorder) Response(slot, status int) {
	r.responses++
	r.status[slot] = status
	if r.sums != nil {
		r.sums[slot].Reset()
	}
	r.add(event{kind: "response", slot: slot, status: status})
}

func (r *recorder) Body(slot int, b []byte) {
	r.bodyBytes += int64(len(b))
	r.bytes[slot] += int64(len(b))
	if r.sums != nil {
		r.sums[slot].Write(b)
	}
	r.add(event{kind: "body", slot: slot, n: len(b)})
}

func (r *recorder) Done(slot int) {
	r.done++
	if r.want != nil && !bytes.Equal(r.sums[slot].Sum(nil), r.want) {
		r.mismatches++
	}
	r.add(event{kind: "done", slot: slot})
}

func (r *recorder) Reset(slot int, code http2.ErrCode) {
	r.resets++
	r.add(event{kind: "reset", slot: slot, code: code})
}

func (r *recorder) Refused(slot int, code http2.ErrCode) {
	r.refused++
	r.add(event{kind: "refused", slot: slot, code: code})
}

func (r *recorder) GoAway(last uint32, code http2.ErrCode) {
	r.goaways++
	r.add(event{kind: "goaway", last: last, code: code})
}

func (r *recorder) String() string { return fmt.Sprint(r.events) }

// script writes server frames into a buffer with x/net's Framer and an
// hpack.Encoder that indexes as Go's server does.
type script struct {
	buf bytes.Buffer
	fr  *http2.Framer
	hb  bytes.Buffer
	enc *hpack.Encoder
}

func newScript() *script {
	s := &script{}
	s.fr = http2.NewFramer(&s.buf, nil)
	s.fr.AllowIllegalWrites = true
	s.enc = hpack.NewEncoder(&s.hb)
	return s
}

// bytes returns and clears what was written so far.
func (s *script) bytes() []byte {
	b := bytes.Clone(s.buf.Bytes())
	s.buf.Reset()
	return b
}

func (s *script) settings(st ...http2.Setting) *script {
	must(s.fr.WriteSettings(st...))
	return s
}

// block encodes :status and the extra name/value pairs.
func (s *script) block(status int, kv ...string) []byte {
	s.hb.Reset()
	if status > 0 {
		must(s.enc.WriteField(hpack.HeaderField{Name: ":status", Value: fmt.Sprint(status)}))
	}
	for i := 0; i+1 < len(kv); i += 2 {
		must(s.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]}))
	}
	return bytes.Clone(s.hb.Bytes())
}

func (s *script) headers(id uint32, status int, end bool, kv ...string) *script {
	must(s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: s.block(status, kv...), EndStream: end, EndHeaders: true}))
	return s
}

func (s *script) data(id uint32, b []byte, end bool) *script {
	must(s.fr.WriteData(id, end, b))
	return s
}

// response writes a 200 with body in frames of at most 16 KiB.
func (s *script) response(id uint32, body []byte) *script {
	s.headers(id, 200, len(body) == 0, "content-type", "application/octet-stream", "content-length", fmt.Sprint(len(body)))
	for off := 0; off < len(body); off += 16384 {
		end := min(off+16384, len(body))
		s.data(id, body[off:end], end == len(body))
	}
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// frame is a detached copy of a frame the client wrote.
type frame struct {
	http2.FrameHeader
	data     []byte // DATA payload, or HEADERS/CONTINUATION fragment
	settings map[http2.SettingID]uint32
	ping     [8]byte
	incr     uint32 // WINDOW_UPDATE
	code     http2.ErrCode
	last     uint32 // GOAWAY
}

func (f frame) String() string { return f.FrameHeader.String() }

// frames parses the client's output (after the preface when it starts with
// one) with x/net's Framer, which checks it is valid HTTP/2.
func frames(t testing.TB, b []byte) []frame {
	t.Helper()
	b = bytes.TrimPrefix(b, []byte(http2.ClientPreface))
	fr := http2.NewFramer(nil, bytes.NewReader(b))
	var out []frame
	for {
		f, err := fr.ReadFrame()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("client output is not valid HTTP/2: %v (after %d frames)", err, len(out))
		}
		c := frame{FrameHeader: f.Header()}
		switch f := f.(type) {
		case *http2.DataFrame:
			c.data = bytes.Clone(f.Data())
		case *http2.HeadersFrame:
			c.data = bytes.Clone(f.HeaderBlockFragment())
		case *http2.ContinuationFrame:
			c.data = bytes.Clone(f.HeaderBlockFragment())
		case *http2.SettingsFrame:
			c.settings = map[http2.SettingID]uint32{}
			f.ForeachSetting(func(s http2.Setting) error { c.settings[s.ID] = s.Val; return nil })
		case *http2.PingFrame:
			c.ping = f.Data
		case *http2.WindowUpdateFrame:
			c.incr = f.Increment
		case *http2.RSTStreamFrame:
			c.code = f.ErrCode
		case *http2.GoAwayFrame:
			c.code, c.last = f.ErrCode, f.LastStreamID
		}
		out = append(out, c)
	}
}

// newTestConn returns a Conn whose preface has been taken, and its recorder.
func newTestConn(t testing.TB, cfg Config, req Request) (*Conn, *recorder) {
	t.Helper()
	if req.Scheme == "" {
		req.Scheme = "http"
	}
	if req.Authority == "" {
		req.Authority = "127.0.0.1"
	}
	tmpl, err := NewTemplate(req)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(max(cfg.MaxStreams, 1), true, true)
	c, err := NewConn(cfg, tmpl, rec)
	if err != nil {
		t.Fatal(err)
	}
	c.Wrote(len(c.Pending()))
	return c, rec
}

// feed feeds b and fails the test on an error.
func feed(t testing.TB, c *Conn, b []byte) {
	t.Helper()
	if err := c.Feed(b); err != nil {
		t.Fatalf("Feed: %v", err)
	}
}

// take returns and consumes the pending output.
func take(c *Conn) []byte {
	b := bytes.Clone(c.Pending())
	c.Wrote(len(b))
	return b
}
