package h2

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"golang.org/x/net/http2"
)

// pings returns n PING frames.
func pings(n int) []byte {
	s := newScript()
	for i := range n {
		must(s.fr.WritePing(false, [8]byte{byte(i >> 8), byte(i)}))
	}
	return s.bytes()
}

// A server that sends PINGs and never reads what the client answers: the
// 10,001st unwritten acknowledgement ends the connection with
// ENHANCE_YOUR_CALM (the GOAWAY queued last), not a larger output.
func TestControlFramesCapped(t *testing.T) {
	c, _ := newTestConn(t, Config{MaxStreams: 1}, Request{})
	feed(t, c, newScript().settings().bytes()) // its ack is the first control frame
	flood := pings(MaxQueuedControlFrames)
	err := c.Feed(flood)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("Feed of SETTINGS and %d PINGs never read: %v, want a connection error ENHANCE_YOUR_CALM", MaxQueuedControlFrames, err)
	}
	fs := frames(t, c.Pending())
	last := fs[len(fs)-1]
	if last.Type != http2.FrameGoAway || last.code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("last queued frame %v (code %v), want GOAWAY ENHANCE_YOUR_CALM", last, last.code)
	}
	if n := len(fs) - 1; n != MaxQueuedControlFrames+1 {
		t.Errorf("%d control frames queued before the GOAWAY, want %d (the one over the cap)", n, MaxQueuedControlFrames+1)
	}
	if err := c.Feed(pings(1)); err != ce {
		t.Errorf("Feed after the connection error: %v, want the same error", err)
	}

	// The same flood, with the acknowledgements written as they come (a
	// server that reads), and with all but part of one written: no error.
	for _, keep := range []int{0, 5} {
		c, _ = newTestConn(t, Config{MaxStreams: 1}, Request{})
		feed(t, c, newScript().settings().bytes())
		for i := range 4 * MaxQueuedControlFrames {
			feed(t, c, flood[17*(i%MaxQueuedControlFrames):17*(i%MaxQueuedControlFrames+1)])
			c.Wrote(len(c.Pending()) - keep)
		}
		if keep > 0 && !bytes.HasSuffix(c.Pending(), flood[17-keep:17]) {
			t.Errorf("keep %d: pending %x, want the last ack's last %d bytes", keep, c.Pending(), keep)
		}
		if want := min(keep, 1); c.ctlN != want {
			t.Errorf("keep %d: %d control frames counted unwritten, want %d", keep, c.ctlN, want)
		}
	}
}

// The count of unwritten control frames follows writes of any size, with
// requests (not counted) between the control frames.
func TestControlFramesCountedAsWritten(t *testing.T) {
	c, _ := newTestConn(t, Config{MaxStreams: 1000}, Request{Path: "/p"})
	feed(t, c, newScript().settings().bytes())
	rnd := rand.New(rand.NewPCG(1, 2))
	queued := 1 // the SETTINGS ack
	var id uint32 = 1
	for i := range 3000 {
		switch i % 3 {
		case 0:
			feed(t, c, pings(1))
			queued++
		case 1:
			c.Start()
		case 2:
			feed(t, c, newScript().headers(id, 200, true).bytes())
			id += 2
		}
		if p := len(c.Pending()); p > 0 && rnd.IntN(4) == 0 {
			c.Wrote(rnd.IntN(p + 1))
		}
		if c.ctlN < 0 || c.ctlN > queued {
			t.Fatalf("step %d: %d control frames counted unwritten, %d ever queued", i, c.ctlN, queued)
		}
	}
	var ctl int
	for _, f := range frames(t, c.out[c.walk:]) {
		if isControl(f.Type) {
			ctl++
		}
	}
	if c.ctlN != ctl {
		t.Errorf("%d control frames counted unwritten, %d in the output from the first unwritten frame", c.ctlN, ctl)
	}
	c.Wrote(len(c.Pending()))
	if c.ctlN != 0 || c.walk != 0 {
		t.Errorf("all written: %d control frames counted unwritten (walk %d), want 0", c.ctlN, c.walk)
	}
}

// A server that answers streams without reading the requests: once
// MaxPendingBytes wait, the connection opens no more streams.
func TestPendingBytesStopStarts(t *testing.T) {
	c, _ := newTestConn(t, Config{MaxStreams: 100}, Request{Path: "/" + string(bytes.Repeat([]byte("p"), 1000))})
	feed(t, c, newScript().settings().bytes())
	var id uint32 = 1
	started := 0
	for range 10 * MaxPendingBytes / 1000 {
		if c.Free() == 0 {
			break
		}
		if c.Start() < 0 {
			t.Fatal("Start failed with Free > 0")
		}
		started++
		feed(t, c, newScript().headers(id, 200, true).bytes())
		id += 2
	}
	if !c.Full() || c.Free() != 0 {
		t.Fatalf("after %d answered streams never written: pending %d bytes, Full %v, Free %d; want Full and Free 0", started, len(c.Pending()), c.Full(), c.Free())
	}
	if n := len(c.Pending()); n > MaxPendingBytes+2000 {
		t.Errorf("pending %d bytes, want at most MaxPendingBytes plus one request", n)
	}
	c.Wrote(len(c.Pending()) / 2)
	if c.Full() || c.Free() == 0 {
		t.Errorf("half written: Full %v, Free %d; want streams again", c.Full(), c.Free())
	}
}
