package quic

import (
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
)

// maxAckRanges bounds the ranges of received packet numbers kept per
// space; the oldest are forgotten (the server then sees them as lost,
// which costs it a retransmission, not correctness).
const maxAckRanges = 32

// ackState is one packet number space's received packets.
type ackState struct {
	ranges  [maxAckRanges]wire.Range // descending
	n       int
	largest int64     // -1: none
	at      time.Time // when largest arrived
	pending int       // ack-eliciting packets not yet acknowledged
}

func (a *ackState) reset() { a.n, a.largest, a.pending = 0, -1, 0 }

// add records pn; it reports false for a duplicate.
func (a *ackState) add(pn uint64, now time.Time) bool {
	if int64(pn) > a.largest {
		a.largest, a.at = int64(pn), now
	}
	r := a.ranges[:a.n]
	i := 0
	for i < len(r) && r[i].Lo > pn+1 {
		i++
	}
	// r[i] is the first range with Lo <= pn+1 (pn may extend it downward
	// or lie in it or above it).
	switch {
	case i < len(r) && pn >= r[i].Lo && pn <= r[i].Hi:
		return false
	case i < len(r) && pn == r[i].Lo-1:
		r[i].Lo = pn
		if i+1 < len(r) && r[i+1].Hi+1 == pn {
			r[i].Lo = r[i+1].Lo
			copy(r[i+1:], r[i+2:])
			a.n--
		}
		return true
	case i < len(r) && pn == r[i].Hi+1:
		r[i].Hi = pn
		if i > 0 && r[i-1].Lo == pn+1 {
			r[i-1].Lo = r[i].Lo
			copy(r[i:], r[i+1:])
			a.n--
		}
		return true
	case i > 0 && r[i-1].Lo == pn+1:
		r[i-1].Lo = pn
		return true
	}
	if a.n == maxAckRanges {
		if i == a.n {
			return true // older than everything kept
		}
		a.n--
	}
	copy(a.ranges[i+1:a.n+1], a.ranges[i:a.n])
	a.ranges[i] = wire.Range{Lo: pn, Hi: pn}
	a.n++
	return true
}

// appendAck appends an ACK frame of every range kept, the delay in the
// default ack_delay_exponent (3).
func (a *ackState) appendAck(b []byte, now time.Time) []byte {
	d := now.Sub(a.at)
	if d < 0 {
		d = 0
	}
	a.pending = 0
	return wire.AppendAck(b, a.ranges[:a.n], uint64(d.Microseconds())>>3)
}
