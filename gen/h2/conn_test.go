package h2

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

func TestPreface(t *testing.T) {
	tmpl, err := NewTemplate(Request{Scheme: "http", Authority: "a"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConn(Config{MaxStreams: 4}, tmpl, newRecorder(4, false, false))
	if err != nil {
		t.Fatal(err)
	}
	out := c.Pending()
	if !bytes.HasPrefix(out, []byte(http2.ClientPreface)) {
		t.Fatalf("output does not start with the client preface: %q", out)
	}
	fs := frames(t, out)
	if len(fs) != 2 {
		t.Fatalf("preface frames %v, want SETTINGS and WINDOW_UPDATE", fs)
	}
	st := fs[0]
	if st.Type != http2.FrameSettings || st.Flags.Has(http2.FlagSettingsAck) {
		t.Fatalf("first frame %v, want SETTINGS", fs[0])
	}
	if v, ok := st.settings[http2.SettingEnablePush]; !ok || v != 0 {
		t.Errorf("ENABLE_PUSH = %d (sent %v), want 0", v, ok)
	}
	if v, ok := st.settings[http2.SettingInitialWindowSize]; !ok || v != DefaultStreamWindow {
		t.Errorf("INITIAL_WINDOW_SIZE = %d (sent %v), want %d", v, ok, DefaultStreamWindow)
	}
	if _, ok := st.settings[http2.SettingMaxFrameSize]; ok {
		t.Error("MAX_FRAME_SIZE sent although it is the default")
	}
	wu := fs[1]
	if wu.Type != http2.FrameWindowUpdate || wu.StreamID != 0 || wu.incr != DefaultConnWindow-initialWindow {
		t.Fatalf("second frame %v, want a connection WINDOW_UPDATE of %d", fs[1], DefaultConnWindow-initialWindow)
	}
}

func TestConfigErrors(t *testing.T) {
	tmpl, _ := NewTemplate(Request{Scheme: "http", Authority: "a"})
	for _, cfg := range []Config{
		{},
		{MaxStreams: MaxStreamsLimit + 1},
		{MaxStreams: 1, StreamWindow: maxWindow + 1},
		{MaxStreams: 1, ConnWindow: 1000},
		{MaxStreams: 1, MaxFrameSize: 100},
		{MaxStreams: 1, MaxFrameSize: MaxFrameSizeLimit + 1},
		{MaxStreams: 1, MaxHeaderBytes: -1},
	} {
		if _, err := NewConn(cfg, tmpl, newRecorder(1, false, false)); err == nil {
			t.Errorf("NewConn(%+v) accepted", cfg)
		}
	}
}

func TestOneStreamBeforeSettings(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 4}, Request{})
	if got := c.Free(); got != 1 {
		t.Fatalf("Free before the server's SETTINGS = %d, want 1", got)
	}
	if s := c.Start(); s < 0 || c.Start() != -1 {
		t.Fatal("want exactly one stream before the server's SETTINGS")
	}
	hs := frames(t, take(c))
	if len(hs) != 1 || hs[0].Type != http2.FrameHeaders || hs[0].StreamID != 1 ||
		!hs[0].Flags.Has(http2.FlagHeadersEndStream|http2.FlagHeadersEndHeaders) {
		t.Fatalf("request frames %v, want one HEADERS with END_STREAM|END_HEADERS on stream 1", hs)
	}
	sc := newScript().settings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	feed(t, c, sc.bytes())
	if got := c.Free(); got != 3 {
		t.Fatalf("Free after SETTINGS = %d, want 3", got)
	}
	if fs := frames(t, take(c)); len(fs) != 1 || fs[0].Type != http2.FrameSettings || !fs[0].Flags.Has(http2.FlagSettingsAck) {
		t.Fatalf("answer to SETTINGS %v, want one SETTINGS ACK", fs)
	}
	body := bytes.Repeat([]byte("x"), 40000)
	feed(t, c, sc.response(1, body).bytes())
	if got := rec.String(); got != "[response(0,200) body(0,40000) done(0)]" {
		t.Fatalf("events %s", got)
	}
	if c.Active() != 0 || c.Free() != 4 {
		t.Fatalf("after the response: active %d free %d", c.Active(), c.Free())
	}
}

func TestMaxConcurrentStreamsHonoured(t *testing.T) {
	c, _ := newTestConn(t, Config{MaxStreams: 10}, Request{})
	feed(t, c, newScript().settings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 3}).bytes())
	n := 0
	for c.Start() >= 0 {
		n++
	}
	if n != 3 || c.Limit() != 3 {
		t.Fatalf("started %d streams with limit %d, want 3 under MAX_CONCURRENT_STREAMS 3", n, c.Limit())
	}
	// Lowering it further mid-connection stops new streams until enough end.
	sc := newScript()
	feed(t, c, sc.settings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1}).bytes())
	feed(t, c, sc.response(1, nil).bytes())
	if c.Free() != 0 {
		t.Fatalf("Free = %d with 2 streams open under a limit of 1", c.Free())
	}
	feed(t, c, sc.response(3, nil).response(5, nil).bytes())
	if c.Free() != 1 {
		t.Fatalf("Free = %d with nothing open under a limit of 1", c.Free())
	}
}

// serverTalk is a server byte stream exercising padding, priority,
// CONTINUATION, 1xx, trailers, PING, PRIORITY and unknown frames for the
// streams 1 and 3 of a connection.
func serverTalk() []byte {
	sc := newScript().settings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 10})
	must(sc.fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	must(sc.fr.WritePriority(3, http2.PriorityParam{StreamDep: 1, Weight: 7}))
	must(sc.fr.WriteRawFrame(0x42, 0x3, 1, []byte("unknown frame type")))
	// 103 Early Hints, then the final headers split over HEADERS and two
	// CONTINUATIONs, padded, with a priority field.
	must(sc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: sc.block(103, "link", "</a.css>; rel=preload"), EndHeaders: true}))
	blk := sc.block(200, "content-type", "text/plain", "x-long", strings.Repeat("v", 300))
	must(sc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk[:5], PadLength: 17,
		Priority: http2.PriorityParam{StreamDep: 0, Weight: 200, Exclusive: true}}))
	must(sc.fr.WriteContinuation(1, false, blk[5:100]))
	must(sc.fr.WriteContinuation(1, true, blk[100:]))
	must(sc.fr.WriteDataPadded(1, false, []byte("hello "), make([]byte, 200)))
	// Stream 3 interleaves.
	sc.headers(3, 404, false, "content-type", "text/plain")
	must(sc.fr.WriteDataPadded(3, true, []byte("gone"), make([]byte, 1)))
	must(sc.fr.WriteDataPadded(1, false, nil, make([]byte, 3))) // padding only
	sc.data(1, []byte("world"), false)
	sc.headers(1, 0, true, "grpc-status", "0") // trailers end stream 1
	return sc.bytes()
}

const serverTalkEvents = "[response(0,200) body(0,6) response(1,404) body(1,4) done(1) body(0,5) done(0)]"

func TestFramesAndPadding(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 2}, Request{})
	c.Start()
	talk := serverTalk()
	feed(t, c, talk[:9+6]) // the SETTINGS frame
	c.Start()
	take(c)
	feed(t, c, talk[9+6:])
	if got := rec.String(); got != serverTalkEvents {
		t.Fatalf("events %s\nwant   %s", got, serverTalkEvents)
	}
	var ping *frame
	for _, f := range frames(t, take(c)) {
		if f.Type == http2.FramePing {
			ping = &f
		}
	}
	if ping == nil || !ping.Flags.Has(http2.FlagPingAck) || ping.ping != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Fatalf("PING answer %v, want an ACK echoing the payload", ping)
	}
}

func TestFeedSplitAnywhere(t *testing.T) {
	talk := serverTalk()
	for _, split := range []string{"byte", "random"} {
		c, rec := newTestConn(t, Config{MaxStreams: 2}, Request{})
		c.Start()
		feed(t, c, talk[:15])
		c.Start()
		rest := talk[15:]
		rng := rand.New(rand.NewPCG(1, 2))
		for len(rest) > 0 {
			n := 1
			if split == "random" {
				n = 1 + rng.IntN(min(len(rest), 40))
			}
			feed(t, c, rest[:n])
			rest = rest[n:]
		}
		// Byte-wise feeding splits body events; compare totals and order.
		if got := rec.String(); got != serverTalkEvents {
			t.Fatalf("%s splits: events %s\nwant %s", split, got, serverTalkEvents)
		}
	}
}

func TestResetAndRefused(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 3}, Request{})
	sc := newScript().settings()
	feed(t, c, sc.bytes())
	for range 3 {
		c.Start()
	}
	must(sc.fr.WriteRSTStream(3, http2.ErrCodeInternal))
	must(sc.fr.WriteRSTStream(5, http2.ErrCodeRefusedStream))
	sc.headers(1, 200, false)
	must(sc.fr.WriteRSTStream(1, http2.ErrCodeCancel)) // mid-body
	feed(t, c, sc.bytes())
	want := "[reset(1,INTERNAL_ERROR) refused(2,REFUSED_STREAM) response(0,200) reset(0,CANCEL)]"
	if got := rec.String(); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if c.Active() != 0 {
		t.Fatalf("%d streams still busy", c.Active())
	}
	// A RST_STREAM(NO_ERROR) after a complete response is for a closed
	// stream: nothing to report.
	c.Start()
	feed(t, c, sc.response(7, nil).bytes())
	must(sc.fr.WriteRSTStream(7, http2.ErrCodeNo))
	feed(t, c, sc.bytes())
	if rec.done != 1 || rec.resets != 2 {
		t.Fatalf("done %d resets %d after a late RST_STREAM(NO_ERROR)", rec.done, rec.resets)
	}
}

func TestGoAway(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 4}, Request{})
	sc := newScript().settings()
	feed(t, c, sc.bytes())
	for range 4 {
		c.Start() // streams 1, 3, 5, 7 in slots 0..3
	}
	must(sc.fr.WriteGoAway(3, http2.ErrCodeNo, []byte("max requests reached, and a long debug text that runs on")))
	feed(t, c, sc.bytes())
	if got, want := rec.String(), "[goaway(3,NO_ERROR) refused(2,NO_ERROR) refused(3,NO_ERROR)]"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if !c.Closing() || c.Free() != 0 || c.Start() != -1 {
		t.Fatal("a connection that got GOAWAY still starts streams")
	}
	feed(t, c, sc.response(1, []byte("a")).response(3, []byte("b")).bytes())
	// A second GOAWAY lowering the last id refuses nothing new here.
	must(sc.fr.WriteGoAway(1, http2.ErrCodeEnhanceYourCalm, nil))
	feed(t, c, sc.bytes())
	if rec.done != 2 || rec.refused != 2 || rec.goaways != 2 || c.Active() != 0 {
		t.Fatalf("done %d refused %d goaways %d active %d", rec.done, rec.refused, rec.goaways, c.Active())
	}
	c.Reset()
	if c.Closing() || c.Free() != 1 || !bytes.HasPrefix(c.Pending(), []byte(http2.ClientPreface)) {
		t.Fatal("Reset did not prepare a fresh connection")
	}
}

func TestReceiveWindowsReplenished(t *testing.T) {
	// Small windows: the server may send 64 KiB per stream and connection
	// before it hears from the client.
	c, rec := newTestConn(t, Config{MaxStreams: 1, StreamWindow: initialWindow, ConnWindow: initialWindow}, Request{})
	sc := newScript().settings()
	feed(t, c, sc.bytes())
	c.Start()
	take(c)
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	streamWin, connWin := int64(initialWindow), int64(initialWindow)
	updates := 0
	sc.headers(1, 200, false)
	feed(t, c, sc.bytes())
	for off := 0; off < len(body); off += 16384 {
		end := min(off+16384, len(body))
		n := int64(end - off)
		if n > streamWin || n > connWin {
			t.Fatalf("at %d: the client's windows (stream %d, connection %d) do not allow the next frame", off, streamWin, connWin)
		}
		streamWin -= n
		connWin -= n
		feed(t, c, sc.data(1, body[off:end], end == len(body)).bytes())
		for _, wu := range frames(t, take(c)) {
			if wu.Type != http2.FrameWindowUpdate {
				t.Fatalf("unexpected %v", wu)
			}
			updates++
			if wu.StreamID == 0 {
				connWin += int64(wu.incr)
			} else {
				streamWin += int64(wu.incr)
			}
		}
	}
	if rec.done != 1 || rec.bytes[0] != int64(len(body)) || !bytes.Equal(rec.sums[0].Sum(nil), sha(body)) {
		t.Fatalf("done %d, %d body bytes", rec.done, rec.bytes[0])
	}
	// Replenished at half the window: 16 KiB frames, 32 KiB per update,
	// for stream and connection, about 2 x 1 MiB / 32 KiB = 64 updates.
	if updates < 60 || updates > 66 {
		t.Fatalf("%d WINDOW_UPDATEs for 1 MiB through 64 KiB windows, want about 64", updates)
	}
	// Sending past the window is a flow-control error.
	c, _ = newTestConn(t, Config{MaxStreams: 1, StreamWindow: initialWindow, ConnWindow: initialWindow, MaxFrameSize: 1 << 17}, Request{})
	feed(t, c, newScript().settings().bytes())
	c.Start()
	sc = newScript()
	sc.headers(1, 200, false)
	sc.data(1, make([]byte, initialWindow+1), false)
	err := c.Feed(sc.bytes())
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Code != http2.ErrCodeFlowControl {
		t.Fatalf("64 KiB + 1 byte past a 64 KiB window: %v, want FLOW_CONTROL_ERROR", err)
	}
}

func sha(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func TestDefaultWindowsNeedNoUpdateFor1MiB(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 1}, Request{})
	sc := newScript().settings()
	feed(t, c, sc.bytes())
	take(c)
	body := make([]byte, 1<<20)
	for range 3 {
		c.Start()
		take(c)
		feed(t, c, sc.response(c.nextID-2, body).bytes())
		if out := take(c); len(out) != 0 {
			t.Fatalf("the client sent %v during a 1 MiB download with default windows", frames(t, out))
		}
	}
	if rec.done != 3 {
		t.Fatalf("done %d", rec.done)
	}
}

func TestRequestBodyFlowControl(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 20000) // 200,000 bytes
	c, rec := newTestConn(t, Config{MaxStreams: 2}, Request{Method: "POST", Body: body})
	sc := newScript().settings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10000})
	feed(t, c, sc.bytes())
	take(c)
	c.Start()
	var got []byte
	collect := func() (end bool) {
		for _, d := range frames(t, take(c)) {
			if d.Type == http2.FrameData {
				if len(d.data) > DefaultMaxFrameSize {
					t.Fatalf("DATA frame of %d bytes", len(d.data))
				}
				got = append(got, d.data...)
				end = end || d.Flags.Has(http2.FlagDataEndStream)
			}
		}
		return end
	}
	collect()
	if len(got) != 10000 {
		t.Fatalf("sent %d body bytes under a 10000-byte stream window", len(got))
	}
	// The connection window (65535) limits next.
	must(sc.fr.WriteWindowUpdate(1, 1<<20))
	feed(t, c, sc.bytes())
	collect()
	if len(got) != initialWindow {
		t.Fatalf("sent %d body bytes under a 65535-byte connection window", len(got))
	}
	for i := 0; !collect(); i++ {
		if i > 100 {
			t.Fatal("body never finished")
		}
		must(sc.fr.WriteWindowUpdate(0, 50000))
		feed(t, c, sc.bytes())
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("sent %d bytes, not the body", len(got))
	}
	// A response before the body is sent stops the upload with a
	// RST_STREAM(CANCEL).
	c.Start()
	take(c)
	feed(t, c, sc.response(3, []byte("early")).bytes())
	fs := frames(t, take(c))
	if len(fs) != 1 || fs[0].Type != http2.FrameRSTStream || fs[0].code != http2.ErrCodeCancel {
		t.Fatalf("after an early response: %v", fs)
	}
	if rec.done != 1 || c.blocked != 0 {
		t.Fatalf("done %d blocked %d", rec.done, c.blocked)
	}
}

func TestProtocolErrors(t *testing.T) {
	settings := newScript().settings().bytes()
	hdr := func(length int, typ http2.FrameType, flags http2.Flags, stream uint32, payload ...byte) []byte {
		b := appendFrameHeader(nil, length, typ, flags, stream)
		return append(b, payload...)
	}
	status200 := []byte{0x88}
	for _, tc := range []struct {
		name string
		in   []byte
		code http2.ErrCode
	}{
		{"HTTP/1.1 answer instead of a preface", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), http2.ErrCodeProtocol},
		{"garbage instead of a preface", []byte("\x00\x00\x00\x01\x00\x00\x00\x00\x00"), http2.ErrCodeProtocol},
		{"PING first", hdr(8, http2.FramePing, 0, 0, make([]byte, 8)...), http2.ErrCodeProtocol},
		{"frame too large", hdr(DefaultMaxFrameSize+1, http2.FrameData, 0, 1), http2.ErrCodeFrameSize},
		{"DATA on stream 0", hdr(1, http2.FrameData, 0, 0, 'x'), http2.ErrCodeProtocol},
		{"DATA on an unopened stream", hdr(1, http2.FrameData, 0, 3, 'x'), http2.ErrCodeProtocol},
		{"DATA on a server stream", hdr(1, http2.FrameData, 0, 2, 'x'), http2.ErrCodeProtocol},
		{"DATA before HEADERS", hdr(1, http2.FrameData, 0, 1, 'x'), http2.ErrCodeProtocol},
		{"DATA padding too long", append(hdr(1, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, status200...), hdr(2, http2.FrameData, http2.FlagDataPadded, 1, 2, 'x')...), http2.ErrCodeProtocol},
		{"HEADERS padding too long", hdr(2, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersPadded, 1, 5, 0x88), http2.ErrCodeProtocol},
		{"PUSH_PROMISE", hdr(4, http2.FramePushPromise, 0, 1, 0, 0, 0, 2), http2.ErrCodeProtocol},
		{"SETTINGS length", hdr(5, http2.FrameSettings, 0, 0, 0, 0, 0, 0, 0), http2.ErrCodeFrameSize},
		{"SETTINGS on a stream", hdr(0, http2.FrameSettings, 0, 1), http2.ErrCodeProtocol},
		{"SETTINGS ACK with payload", hdr(6, http2.FrameSettings, http2.FlagSettingsAck, 0, 0, 3, 0, 0, 0, 1), http2.ErrCodeFrameSize},
		{"ENABLE_PUSH 1", hdr(6, http2.FrameSettings, 0, 0, 0, 2, 0, 0, 0, 1), http2.ErrCodeProtocol},
		{"MAX_FRAME_SIZE too small", hdr(6, http2.FrameSettings, 0, 0, 0, 5, 0, 0, 0, 1), http2.ErrCodeProtocol},
		{"INITIAL_WINDOW_SIZE too large", hdr(6, http2.FrameSettings, 0, 0, 0, 4, 0x80, 0, 0, 0), http2.ErrCodeFlowControl},
		{"CONTINUATION alone", hdr(1, http2.FrameContinuation, http2.FlagContinuationEndHeaders, 1, 0x88), http2.ErrCodeProtocol},
		{"block interrupted", append(hdr(1, http2.FrameHeaders, 0, 1, 0x88), hdr(8, http2.FramePing, 0, 0, make([]byte, 8)...)...), http2.ErrCodeProtocol},
		{"no :status", hdr(1, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x82), http2.ErrCodeProtocol},
		{":status second", hdr(2, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x80|31, 0x88), http2.ErrCodeProtocol},
		{"101", hdr(5, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x08, 3, '1', '0', '1'), http2.ErrCodeProtocol},
		{"1xx with END_STREAM", hdr(5, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, 1, 0x08, 3, '1', '0', '3'), http2.ErrCodeProtocol},
		{"bad :status", hdr(5, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x08, 3, '2', 'x', '0'), http2.ErrCodeProtocol},
		{"HPACK index 0", hdr(1, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x80), http2.ErrCodeCompression},
		{"HPACK truncated", hdr(2, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x08, 3), http2.ErrCodeCompression},
		{"HPACK table too large", hdr(3, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x3f, 0xe1, 0x7f), http2.ErrCodeCompression},
		{"trailers without END_STREAM", append(hdr(1, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, status200...), hdr(1, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, 0x80|31)...), http2.ErrCodeProtocol},
		{"WINDOW_UPDATE zero", hdr(4, http2.FrameWindowUpdate, 0, 0, 0, 0, 0, 0), http2.ErrCodeProtocol},
		{"WINDOW_UPDATE overflow", hdr(4, http2.FrameWindowUpdate, 0, 0, 0x7f, 0xff, 0xff, 0xff), http2.ErrCodeFlowControl},
		{"WINDOW_UPDATE length", hdr(3, http2.FrameWindowUpdate, 0, 0, 0, 0, 1), http2.ErrCodeFrameSize},
		{"PING length", hdr(4, http2.FramePing, 0, 0, 0, 0, 0, 0), http2.ErrCodeFrameSize},
		{"RST_STREAM on stream 0", hdr(4, http2.FrameRSTStream, 0, 0, 0, 0, 0, 0), http2.ErrCodeProtocol},
		{"GOAWAY short", hdr(4, http2.FrameGoAway, 0, 0, 0, 0, 0, 0), http2.ErrCodeFrameSize},
		{"PRIORITY length", hdr(4, http2.FramePriority, 0, 1, 0, 0, 0, 0), http2.ErrCodeFrameSize},
		{"header block too large", hdr(DefaultMaxFrameSize, http2.FrameHeaders, 0, 1, make([]byte, DefaultMaxFrameSize)...), http2.ErrCodeEnhanceYourCalm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestConn(t, Config{MaxStreams: 1, MaxHeaderBytes: DefaultMaxFrameSize - 1}, Request{})
			c.Start()
			in := tc.in
			if !strings.Contains(tc.name, "preface") && !strings.Contains(tc.name, "first") {
				feed(t, c, settings)
			}
			take(c)
			err := c.Feed(in)
			var ce *ConnError
			if !errors.As(err, &ce) || ce.Code != tc.code {
				t.Fatalf("Feed: %v, want a connection error %v", err, tc.code)
			}
			if again := c.Feed([]byte{0}); again != err {
				t.Fatalf("Feed after the error: %v", again)
			}
			fs := frames(t, take(c))
			if g := fs[len(fs)-1]; g.Type != http2.FrameGoAway || g.code != tc.code {
				t.Fatalf("queued %v, want a GOAWAY %v", fs, tc.code)
			}
			if !c.Closing() || c.Start() != -1 {
				t.Fatal("a failed connection still starts streams")
			}
		})
	}
}

func TestCancelKeepsHPACKInStep(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 2}, Request{})
	sc := newScript().settings()
	feed(t, c, sc.bytes())
	a, b := c.Start(), c.Start()
	take(c)
	c.Cancel(a)
	fs := frames(t, take(c))
	if len(fs) != 1 || fs[0].Type != http2.FrameRSTStream || fs[0].code != http2.ErrCodeCancel || fs[0].StreamID != 1 {
		t.Fatalf("Cancel queued %v, want RST_STREAM(CANCEL) on stream 1", fs)
	}
	// The server answers the cancelled stream first with 418, which its
	// encoder indexes; the second response refers to that entry.
	sc.headers(1, 418, false, "x-a", "1")
	sc.data(1, []byte("late"), true)
	sc.headers(3, 418, true, "x-a", "1")
	feed(t, c, sc.bytes())
	if got := rec.String(); got != "[response(1,418) done(1)]" || b != 1 {
		t.Fatalf("events %s", got)
	}
	if c.Active() != 0 {
		t.Fatal("busy streams left")
	}
}

func TestStreamIDsRunOut(t *testing.T) {
	c, rec := newTestConn(t, Config{MaxStreams: 4}, Request{})
	sc := newScript().settings()
	feed(t, c, sc.bytes())
	c.nextID = maxStreamID - 2 // two ids left: 2^31-3 and 2^31-1
	if c.Free() != 2 {
		t.Fatalf("Free = %d with two stream ids left", c.Free())
	}
	c.Start()
	c.Start()
	if !c.Closing() || c.Start() != -1 {
		t.Fatal("started a stream past id 2^31-1")
	}
	feed(t, c, sc.response(maxStreamID-2, nil).response(maxStreamID, nil).bytes())
	if rec.done != 2 {
		t.Fatalf("done %d", rec.done)
	}
}

func TestLargeHeaderBlockUsesContinuation(t *testing.T) {
	long := strings.Repeat("a", 60000)
	c, _ := newTestConn(t, Config{MaxStreams: 1}, Request{Header: hdrs("x-big", long)})
	feed(t, c, newScript().settings().bytes())
	take(c)
	c.Start()
	fs := frames(t, take(c))
	if len(fs) != 3 || fs[0].Type != http2.FrameHeaders || fs[1].Type != http2.FrameContinuation ||
		!fs[2].Flags.Has(http2.FlagContinuationEndHeaders) || fs[0].Flags.Has(http2.FlagHeadersEndHeaders) {
		t.Fatalf("frames %v, want HEADERS + 2 CONTINUATION", fs)
	}
	var blk []byte
	for _, f := range fs {
		blk = append(blk, f.data...)
	}
	if !bytes.Equal(blk, c.tmpl.block) {
		t.Fatal("fragments do not add up to the block")
	}
}

func TestWroteKeepsUnwrittenBytes(t *testing.T) {
	c, _ := newTestConn(t, Config{MaxStreams: 100}, Request{Path: "/a-path-that-makes-requests-longer"})
	feed(t, c, newScript().settings().bytes())
	take(c)
	var all, written []byte
	for range 100 {
		c.Start()
		p := c.Pending()
		all = append(all, p[len(p)-(frameHeaderLen+len(c.tmpl.block)):]...)
		n := min(len(p), 37) // a socket that takes 37 bytes per write
		written = append(written, p[:n]...)
		c.Wrote(n)
	}
	for len(c.Pending()) > 0 {
		p := c.Pending()
		n := min(len(p), 1000)
		written = append(written, p[:n]...)
		c.Wrote(n)
	}
	if !bytes.Equal(all, written) {
		t.Fatalf("written bytes differ from the queued ones (%d vs %d)", len(written), len(all))
	}
	ids := map[uint32]bool{}
	for _, f := range frames(t, written) {
		ids[f.StreamID] = true
	}
	if len(ids) != 100 {
		t.Fatalf("%d distinct streams in the output", len(ids))
	}
}
