package quic

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
)

func TestAckRanges(t *testing.T) {
	var a ackState
	a.reset()
	now := time.Now()
	for _, pn := range []uint64{0, 1, 2, 5, 4, 9, 7, 8, 3} {
		if !a.add(pn, now) {
			t.Fatalf("%d: reported a duplicate", pn)
		}
	}
	if a.add(4, now) {
		t.Error("duplicate 4 not reported")
	}
	if got := a.ranges[:a.n]; len(got) != 2 || got[0] != (wire.Range{Lo: 7, Hi: 9}) || got[1] != (wire.Range{Lo: 0, Hi: 5}) {
		t.Fatalf("ranges %v", got)
	}
	a.add(6, now)
	if a.n != 1 || a.ranges[0] != (wire.Range{Lo: 0, Hi: 9}) || a.largest != 9 {
		t.Fatalf("ranges %v largest %d", a.ranges[:a.n], a.largest)
	}
	// Many gaps: the oldest ranges are forgotten, the newest kept.
	a.reset()
	for pn := uint64(0); pn < 200; pn += 2 {
		a.add(pn, now)
	}
	if a.n != maxAckRanges || a.ranges[0].Hi != 198 {
		t.Fatalf("n %d first %v", a.n, a.ranges[0])
	}
	var f wire.Frame
	b := a.appendAck(nil, now)
	if _, err := wire.ParseFrame(b, &f); err != nil || f.Largest != 198 || f.FirstRange != 0 {
		t.Fatalf("%+v %v", f, err)
	}
}

func TestReassembly(t *testing.T) {
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		type piece struct{ off, end int }
		var pieces []piece
		for off := 0; off < len(data); {
			n := 1 + rng.IntN(400)
			pieces = append(pieces, piece{off, min(off+n, len(data))})
			off += n
		}
		dup := len(pieces)
		for i := 0; i < dup/3; i++ { // duplicates and overlaps
			p := pieces[rng.IntN(dup)]
			pieces = append(pieces, piece{max(0, p.off-10), p.end})
		}
		rng.Shuffle(len(pieces), func(i, j int) { pieces[i], pieces[j] = pieces[j], pieces[i] })
		var r reasm
		r.reset()
		var got []byte
		for _, p := range pieces {
			d, ok := r.push(uint64(p.off), data[p.off:p.end])
			if !ok {
				t.Fatal("bounds")
			}
			for ; d != nil; d = r.next() {
				got = append(got, d...)
			}
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("trial %d: reassembled %d bytes, differ", trial, len(got))
		}
	}
}

// FuzzReceive feeds arbitrary datagrams to a started Conn: nothing
// panics, and a datagram that is not for the connection changes nothing.
func FuzzReceive(f *testing.F) {
	f.Add([]byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x41, 0})
	f.Add([]byte{0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0x80, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x1d})
	cl := newTestClient(f, "", true, nil)
	var c Conn
	f.Fuzz(func(t *testing.T, d []byte) {
		now := time.Now()
		if _, err := c.Start(cl, now, nil); err != nil {
			t.Fatal(err)
		}
		// Address the datagram to the connection half of the time.
		if len(d) > 1+ConnIDLen && d[0]&1 == 0 {
			if d[0]&0x80 == 0 {
				copy(d[1:], c.SCID())
			} else if len(d) > 6+ConnIDLen && int(d[5]) == ConnIDLen {
				copy(d[6:], c.SCID())
			}
		}
		c.Receive(now, d, nil)
		c.Timeout(now.Add(time.Second), nil)
	})
}

// FuzzReassembly reassembles a stream from the pieces data describes (per
// piece an offset and a length, 2 bytes each, into a 64 KiB stream),
// duplicates and overlaps included, on a STREAM reassembler and a CRYPTO
// one (its smaller bound). What comes out is always the stream's next bytes
// in order, never more than the pieces held, and all of the covered prefix;
// a refused piece (over a bound) is refused by the rule: the buffered bytes
// and it past the bound, or too many pieces.
func FuzzReassembly(f *testing.F) {
	f.Add([]byte{0, 0, 0, 10, 0, 10, 0, 10})            // in order
	f.Add([]byte{0, 10, 0, 10, 0, 0, 0, 10})            // out of order
	f.Add([]byte{0, 5, 0, 10, 0, 0, 0, 20, 0, 3, 0, 4}) // overlaps
	f.Add([]byte{0xff, 0, 0xff, 0xff, 0, 0, 0, 1})      // far out, then the start
	f.Add([]byte{0, 2, 0, 1, 0, 4, 0, 1, 0, 6, 0, 1})   // many small gaps
	f.Add(bytes.Repeat([]byte{0x10, 0, 0x10, 0}, 40))   // one piece again and again
	stream := make([]byte, 1<<16+1<<16)
	for i := range stream {
		stream[i] = byte(i*7 + i>>8)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end := 0
		for p := data; len(p) >= 4; p = p[4:] {
			end = max(end, (int(p[0])<<8|int(p[1]))+(int(p[2])<<8|int(p[3])))
		}
		for _, crypt := range []bool{false, true} {
			var r reasm
			r.reset()
			r.crypt = crypt
			limit := maxBuffered
			if crypt {
				limit = maxCryptoBuffered
			}
			var got []byte
			covered := make([]bool, end+1)
			for p := data; len(p) >= 4; p = p[4:] {
				off := int(p[0])<<8 | int(p[1])
				n := int(p[2])<<8 | int(p[3])
				before := len(r.arena)
				d, ok := r.push(uint64(off), stream[off:off+n])
				if !ok {
					if off <= len(got) || before+n <= limit && len(r.pend) < maxSegments {
						t.Fatalf("piece %d+%d refused with %d bytes buffered in %d pieces (limit %d)", off, n, before, len(r.pend), limit)
					}
					continue
				}
				for i := off; i < off+n; i++ {
					covered[i] = true
				}
				for ; d != nil; d = r.next() {
					if !bytes.Equal(d, stream[len(got):len(got)+len(d)]) {
						t.Fatalf("delivered %d bytes at %d that are not the stream's", len(d), len(got))
					}
					got = append(got, d...)
				}
				if uint64(len(got)) != r.off {
					t.Fatalf("delivered %d bytes, offset %d", len(got), r.off)
				}
				if len(r.arena) > limit {
					t.Fatalf("%d bytes buffered, bound %d", len(r.arena), limit)
				}
			}
			if prefix := slices.Index(covered, false); len(got) != prefix {
				t.Fatalf("delivered %d bytes of the %d the pieces cover from 0", len(got), prefix)
			}
		}
	})
}
