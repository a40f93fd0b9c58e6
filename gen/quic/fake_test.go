package quic

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
	"github.com/loadlab/loadlab/internal/testutil"
)

// fakeServer takes over a Conn after a real handshake and first
// response (quic-go's), writing the server's 1-RTT packets itself with
// the connection's keys and reading the client's: for what a real
// server does not do on demand (key updates every few packets, a
// retired connection ID, data on old streams, a withheld MAX_DATA).
type fakeServer struct {
	t          *testing.T
	c          *Conn
	seal, open wire.Keys // server to client, client to server
	sSecret    [64]byte
	cSecret    [64]byte
	n          int
	phase      bool
	pn         uint64
	largest    int64 // of the client's packets read
}

// establishedConn returns a keep-alive Conn whose first response (1000
// bytes) came from quic-go's server, and a fakeServer that continues
// its 1-RTT side (the real server gets nothing more).
func establishedConn(t *testing.T, adjust func(*Config)) (*Conn, *fakeServer) {
	t.Helper()
	srv := startServer(t, sizeHandler(), serverOpts{})
	cl := newTestClient(t, srv.ca, true, func(c *Config) {
		c.Path = "/1000"
		c.KeepAlive = true
		if adjust != nil {
			adjust(c)
		}
	})
	d := newDriver(t, srv.addr)
	c := new(Conn)
	if err := d.first(cl, c, 5*time.Second); err != nil || c.Status() != 200 {
		t.Fatalf("%v status %d", err, c.Status())
	}
	if c.keyUpdates != 0 {
		t.Fatal("a key update already")
	}
	f := &fakeServer{t: t, c: c, pn: uint64(c.lv[lvlApp].acks.largest) + 1000, largest: -1}
	f.n = c.nsecret
	copy(f.sSecret[:], c.sSecret[:f.n])
	copy(f.cSecret[:], c.cSecret[:f.n])
	s := c.hs.Suite()
	k := c.cl.kdf(s)
	if err := f.seal.Set(k, s, f.sSecret[:f.n]); err != nil {
		t.Fatal(err)
	}
	if err := f.open.Set(k, s, f.cSecret[:f.n]); err != nil {
		t.Fatal(err)
	}
	return c, f
}

// update moves the fake server to the next key phase.
func (f *fakeServer) update() {
	s := f.c.hs.Suite()
	k := f.c.cl.kdf(s)
	var tmp [64]byte
	copy(f.sSecret[:], wire.NextSecret(k, tmp[:0], f.sSecret[:f.n]))
	copy(f.cSecret[:], wire.NextSecret(k, tmp[:0], f.cSecret[:f.n]))
	if err := f.seal.Update(k, s, f.sSecret[:f.n], &f.seal); err != nil {
		f.t.Fatal(err)
	}
	if err := f.open.Update(k, s, f.cSecret[:f.n], &f.open); err != nil {
		f.t.Fatal(err)
	}
	f.phase = !f.phase
}

// packet returns a server 1-RTT datagram with the frames in payload.
func (f *fakeServer) packet(payload []byte) []byte {
	b, pnOff := wire.AppendShortHeader(nil, f.c.SCID(), f.phase, f.pn)
	b = append(b, payload...)
	for len(b)-pnOff-4 < 4 {
		b = append(b, 0) // PADDING, for the header protection sample
	}
	b = f.seal.Seal(b, 0, -1, pnOff, f.pn)
	f.pn++
	return b
}

// receive feeds the client a packet with payload at now and returns the
// frames of what it sent back (nil if nothing).
func (f *fakeServer) receive(now time.Time, payload []byte) ([]byte, error) {
	out, err := f.c.Receive(now, f.packet(payload), nil)
	return f.read(out), err
}

// read opens a client datagram (one 1-RTT packet) and returns its
// frames, nil if out is empty.
func (f *fakeServer) read(out []byte) []byte {
	if len(out) == 0 {
		return nil
	}
	h, err := wire.ParseHeader(out, f.c.dcidLen)
	if err != nil || h.Type != wire.Short {
		f.t.Fatalf("client datagram: %v type %v", err, h.Type)
	}
	pn, p, err := f.open.Open(out, h.PNOffset, f.largest)
	if err != nil {
		f.t.Fatalf("client packet does not open with the fake server's keys (phase %v): %v", f.phase, err)
	}
	if wire.KeyPhase(out[0]) != f.phase {
		f.t.Fatalf("client packet in key phase %v, want %v", wire.KeyPhase(out[0]), f.phase)
	}
	f.largest = int64(pn)
	return p
}

// frames parses p into its frames' types (STREAM frames as 0x08) and
// the frames themselves.
func frames(t *testing.T, p []byte) ([]uint64, []wire.Frame) {
	t.Helper()
	var types []uint64
	var fs []wire.Frame
	for len(p) > 0 {
		var fr wire.Frame
		n, err := wire.ParseFrame(p, &fr)
		if err != nil {
			t.Fatalf("client frame: %v", err)
		}
		p = p[n:]
		if fr.Type == wire.FramePadding {
			continue
		}
		types = append(types, fr.Type)
		fs = append(fs, fr)
	}
	return types, fs
}

func has(types []uint64, t uint64) bool { return bytes.IndexByte(u8(types), byte(t)) >= 0 }

func u8(types []uint64) []byte {
	b := make([]byte, len(types))
	for i, t := range types {
		b[i] = byte(t)
	}
	return b
}

// ack returns an ACK frame of every 1-RTT packet the client sent.
func (f *fakeServer) ack() []byte {
	return wire.AppendAck(nil, []wire.Range{{Lo: 0, Hi: f.c.lv[lvlApp].nextPN - 1}}, 0)
}

// response returns a STREAM frame with a complete 200 response of body
// on stream id: HEADERS (:status 200, static index 25) and DATA.
func response(id uint64, body []byte) []byte {
	var r []byte
	r = append(r, 0x01, 3, 0, 0, 0xc0|25) // HEADERS: QPACK prefix, indexed static :status 200
	r = wire.AppendVarint(r, 0x00)
	r = wire.AppendVarint(r, uint64(len(body)))
	r = append(r, body...)
	return wire.AppendStream(nil, id, 0, r, true)
}

// The server updates its keys again and again: the client follows each
// update (RFC 9001 §6), answering in the new phase. quic-go updates only
// once within a test's reach (after its first 100 packets, then every
// 100,000), so the fake server does it every packet here.
func TestKeyUpdates(t *testing.T) {
	c, f := establishedConn(t, nil)
	now := time.Now()
	body := testutil.Body(100)
	for i := 1; i <= 5; i++ {
		f.update()
		if _, err := c.Next(now, nil); err != nil {
			t.Fatal(err)
		}
		out, err := f.receive(now, append(f.ack(), response(c.reqID, body)...))
		if err != nil || !c.Done() || c.Status() != 200 || c.keyUpdates != i {
			t.Fatalf("update %d: err %v done %v status %d, %d key updates", i, err, c.Done(), c.Status(), c.keyUpdates)
		}
		if out != nil {
			t.Fatalf("update %d: the client sent %x after a complete response (its ACK should wait)", i, out)
		}
		// The held ACK goes out on the timer, in the new phase.
		out2, _ := c.Timeout(c.Deadline(), nil)
		types, _ := frames(t, f.read(out2))
		if !has(types, wire.FrameAck) {
			t.Fatalf("update %d: the delayed ACK carries %v", i, types)
		}
	}
}

// Data on a request stream the client has finished (a retransmission of
// an earlier response) is ignored; on one it never opened it is a
// protocol error.
func TestOldStreamData(t *testing.T) {
	c, f := establishedConn(t, nil)
	now := time.Now()
	if _, err := c.Next(now, nil); err != nil || c.reqID != 4 {
		t.Fatalf("%v stream %d", err, c.reqID)
	}
	old := response(0, testutil.Body(1000))
	if _, err := f.receive(now, old); err != nil || c.Done() || c.Status() != 0 {
		t.Fatalf("stream 0's data again: err %v done %v status %d", err, c.Done(), c.Status())
	}
	if _, err := f.receive(now, response(4, testutil.Body(10))); err != nil || !c.Done() || c.BodyBytes() != 10 {
		t.Fatalf("stream 4: err %v done %v body %d", err, c.Done(), c.BodyBytes())
	}
	if _, err := f.receive(now, old); err != nil {
		t.Fatalf("stream 0's data after stream 4's: %v", err)
	}
	_, err := f.receive(now, response(8, nil))
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassProtocol || e.Code != 0x05 || !c.Closed() {
		t.Fatalf("data on stream 8, never opened: %v, want STREAM_STATE_ERROR", err)
	}
}

// The server retires the connection ID the client sends to: the
// connection closes with ClassConnIDRetired and CONNECTION_CLOSE
// NO_ERROR.
func TestConnIDRetired(t *testing.T) {
	c, f := establishedConn(t, nil)
	ncid := []byte{wire.FrameNewConnectionID, 1, 1, 4, 9, 9, 9, 9}
	ncid = append(ncid, make([]byte, 16)...)
	out, err := f.receive(time.Now(), ncid)
	if !errors.Is(err, ErrConnIDRetired) || ClassOf(err) != ClassConnIDRetired || !c.Closed() {
		t.Fatalf("err %v closed %v", err, c.Closed())
	}
	types, fs := frames(t, out)
	last := fs[len(fs)-1]
	if types[len(types)-1] != wire.FrameConnectionClose || last.ErrorCode != 0 {
		t.Fatalf("client sent %v, last %+v: want CONNECTION_CLOSE NO_ERROR", types, last)
	}
	// A NEW_CONNECTION_ID that retires nothing changes nothing.
	c, f = establishedConn(t, nil)
	ncid[2] = 0
	if _, err := f.receive(time.Now(), ncid); err != nil || c.Closed() || !c.Reusable(time.Now()) {
		t.Fatalf("err %v closed %v", err, c.Closed())
	}
}

// A request the server's connection credit (MAX_DATA) does not allow
// waits in the Conn; the MAX_DATA that allows it sends it, with the
// pending ACK, and the request's deadline ran from Next.
func TestQueuedForMaxData(t *testing.T) {
	c, f := establishedConn(t, nil)
	now := time.Now()
	c.peerData = c.sentData + uint64(len(c.cl.cfg.request)) - 1 // one byte short
	out, err := c.Next(now, nil)
	if err != nil || !c.reqQueued || c.Done() || c.Status() != 0 {
		t.Fatalf("err %v queued %v", err, c.reqQueued)
	}
	// Only the pending ACK goes out (the server may be waiting for it).
	if p := f.read(out); p != nil {
		if types, _ := frames(t, p); has(types, wire.FrameStream) {
			t.Fatalf("the request went out without credit: %v", types)
		}
	}
	if d := c.Deadline(); !d.Equal(now.Add(c.cl.cfg.Timeout)) {
		t.Fatalf("deadline %v, want the request's", d.Sub(now))
	}
	later := now.Add(time.Millisecond)
	p, err := f.receive(later, wire.AppendMaxData(nil, c.peerData+1))
	if err != nil {
		t.Fatal(err)
	}
	_, fs := frames(t, p)
	var stream *wire.Frame
	for i := range fs {
		if fs[i].Type == wire.FrameStream {
			stream = &fs[i]
		}
	}
	if stream == nil || stream.StreamID != 4 || !stream.Fin || !bytes.Equal(stream.Data, c.cl.cfg.request) || c.reqQueued {
		t.Fatalf("after MAX_DATA the client sent %+v, queued %v", fs, c.reqQueued)
	}
	if _, err := c.Timeout(now.Add(c.cl.cfg.Timeout), nil); ClassOf(err) != ClassTimeout {
		t.Fatalf("at the deadline from Next: %v", err)
	}
}

// The client's MAX_DATA is sent again on a probe timeout until a packet
// carrying it is acknowledged; idle with nothing outstanding, Deadline
// is zero (no per-request timeout between requests).
func TestMaxDataResent(t *testing.T) {
	c, f := establishedConn(t, func(c *Config) { c.Window = 4096 })
	now := time.Now()
	if _, err := c.Next(now, nil); err != nil {
		t.Fatal(err)
	}
	// 3000 bytes: less than half of the 4096-byte window left.
	p, err := f.receive(now, append(f.ack(), response(4, testutil.Body(3000))...))
	if err != nil || !c.Done() {
		t.Fatalf("err %v done %v", err, c.Done())
	}
	if p != nil {
		t.Fatalf("the client sent %x after a complete response: its MAX_DATA should wait for the next packet", p)
	}
	// Idle: the held ACK's timer; the MAX_DATA rides with that ACK.
	at := c.Deadline()
	if at.IsZero() || at.Sub(now) > ackDelay {
		t.Fatalf("deadline %v after a response, want the delayed ACK's", at.Sub(now))
	}
	out, _ := c.Timeout(at, nil)
	types, fs := frames(t, f.read(out))
	if !has(types, wire.FrameMaxData) || !has(types, wire.FrameAck) {
		t.Fatalf("sent %v", types)
	}
	want := fs[len(fs)-1].Offset
	// Not acknowledged: the PTO sends it again, and again.
	for i := 0; i < 2; i++ {
		at = c.Deadline()
		if at.IsZero() {
			t.Fatal("no probe timeout for the unacknowledged MAX_DATA")
		}
		out, _ = c.Timeout(at, nil)
		types, fs = frames(t, f.read(out))
		if !has(types, wire.FrameMaxData) || fs[len(fs)-1].Offset != want {
			t.Fatalf("probe %d sent %v", i, types)
		}
	}
	// Acknowledged: nothing is due while idle.
	if _, err := f.receive(at, f.ack()); err != nil {
		t.Fatal(err)
	}
	if d := c.Deadline(); !d.IsZero() {
		t.Fatalf("deadline %v while idle with everything acknowledged", d.Sub(at))
	}
	if !c.Reusable(at) {
		t.Fatal("not reusable")
	}
}

// Out-of-turn calls are errors, not panics; Close sends
// CONNECTION_CLOSE (H3_NO_ERROR) once; the packet limit ends reuse.
func TestNextClose(t *testing.T) {
	c, f := establishedConn(t, nil)
	now := time.Now()
	if !c.Reusable(now) {
		t.Fatal("not reusable after the first response")
	}
	c.lv[lvlApp].nextPN += MaxPackets
	if c.Reusable(now) {
		t.Fatal("reusable past MaxPackets")
	}
	c.lv[lvlApp].nextPN -= MaxPackets
	if _, err := c.Next(now, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(now, nil); !errors.Is(err, ErrNotDone) || c.Closed() {
		t.Fatalf("Next while a request is in flight: %v", err)
	}
	types, fs := frames(t, f.read(c.Close(now, nil)))
	last := fs[len(fs)-1]
	if types[len(types)-1] != wire.FrameConnectionCloseApp || last.ErrorCode != 0x100 || !c.Closed() || c.Err() != nil {
		t.Fatalf("Close sent %v %+v; closed %v err %v", types, last, c.Closed(), c.Err())
	}
	if out := c.Close(now, nil); len(out) != 0 {
		t.Fatal("a second Close sent something")
	}
	if _, err := c.Next(now, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	if !c.Deadline().IsZero() || c.Reusable(now) {
		t.Fatal("closed but a deadline or reusable")
	}
	var one Conn
	cl := newTestClient(t, "", true, nil)
	one.Start(cl, now, nil)
	one.done = true
	if _, err := one.Next(now, nil); !errors.Is(err, ErrNoKeepAlive) {
		t.Fatalf("Next without KeepAlive: %v", err)
	}
}

// Tag goes into the SCID's first two bytes; TagOf reads it from short
// and long header datagrams.
func TestTag(t *testing.T) {
	cl := newTestClient(t, "", true, nil)
	var c Conn
	c.Tag = 0xbeef
	if _, err := c.Start(cl, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if Tag(c.SCID()) != 0xbeef || c.SCID()[0] != 0xbe || c.SCID()[1] != 0xef {
		t.Fatalf("SCID %x", c.SCID())
	}
	short := append([]byte{0x40}, c.SCID()...)
	short = append(short, 1, 2, 3, 4)
	long, _, _ := wire.AppendLongHeader(nil, wire.Handshake, c.SCID(), []byte{1, 2, 3, 4}, nil, 0)
	for _, d := range [][]byte{short, long} {
		if tag, ok := TagOf(d); !ok || tag != 0xbeef {
			t.Errorf("TagOf(%x) = %#x %v", d, tag, ok)
		}
	}
	for _, d := range [][]byte{nil, short[:ConnIDLen], {0xc0, 0, 0, 0, 1, 4, 1, 2, 3, 4}} {
		if _, ok := TagOf(d); ok {
			t.Errorf("TagOf(%x) ok", d)
		}
	}
}

// FuzzReceiveKeepAlive feeds arbitrary frames, in authenticated 1-RTT
// packets, to a keep-alive Conn past its handshake and first response
// (a fresh copy each time): nothing panics, and Next, Timeout, Reusable
// and Close stay safe whatever state the frames left.
func FuzzReceiveKeepAlive(f *testing.F) {
	body := testutil.Body(50)
	f.Add(response(4, body), true)
	f.Add(append(response(0, body), response(8, body)...), true)
	f.Add([]byte{wire.FrameMaxStreamsBidi, 0x40, 50, wire.FrameMaxData, 0x80, 1, 0, 0}, false)
	f.Add(wire.AppendStream(nil, 3, 0, []byte{0, 4, 0, 7, 1, 8}, false), false) // control stream: SETTINGS, GOAWAY 8
	f.Add([]byte{wire.FrameNewConnectionID, 2, 1, 4, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, true)
	f.Add([]byte{wire.FrameResetStream, 4, 0x41, 0, 0}, true)
	var base Conn
	var fs *fakeServer
	f.Fuzz(func(t *testing.T, payload []byte, next bool) {
		if fs == nil {
			c, s := establishedConn(t, nil)
			base, fs = *c, s
		}
		c := base // a copy: its slices share backing arrays, which is fine for one goroutine
		c.stream.pend, c.ctl.pend = nil, nil
		fs.c = &c
		now := time.Now()
		if next {
			if _, err := c.Next(now, nil); err != nil {
				t.Fatal(err)
			}
		}
		c.Receive(now, fs.packet(payload), nil)
		c.Reusable(now)
		if c.Done() {
			c.Next(now, nil)
		}
		c.Timeout(c.Deadline(), nil)
		c.Close(now, nil)
		if !c.Closed() {
			t.Fatal("not closed after Close")
		}
	})
}
