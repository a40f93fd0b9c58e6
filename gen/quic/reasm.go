package quic

// maxBuffered bounds the out-of-order bytes one stream keeps.
const maxBuffered = 16 << 20

// maxCryptoBuffered bounds the out-of-order bytes a CRYPTO stream keeps:
// CRYPTO has no flow control, and no flight the handshake takes needs
// more (tls13 refuses a message over 256 KiB; the rest of a flight is
// small), so a server cannot make each connection hold 16 MiB per level.
const maxCryptoBuffered = 272 << 10

// maxSegments bounds the out-of-order pieces one stream keeps (pieces
// that continue the last one merge with it).
const maxSegments = 1024

type segment struct {
	off        uint64
	start, end int // in arena
}

// reasm reassembles one byte stream (CRYPTO at one level, or a STREAM)
// from frames by offset. In-order data passes through without a copy;
// data from beyond the next offset is copied into an arena until the gap
// fills. Not safe for concurrent use.
type reasm struct {
	off   uint64 // bytes delivered
	fin   int64  // final size, -1 until known
	pend  []segment
	arena []byte
	crypt bool // a CRYPTO stream: maxCryptoBuffered, not maxBuffered
}

func (r *reasm) reset() {
	r.off, r.fin, r.pend, r.arena = 0, -1, r.pend[:0], r.arena[:0]
}

// push takes a frame's data at off and returns the bytes now deliverable
// at r.off (nil if none); call next for more. ok is false when the
// buffered data would exceed the bounds.
func (r *reasm) push(off uint64, data []byte) (deliver []byte, ok bool) {
	end := off + uint64(len(data))
	if end <= r.off {
		return nil, true // a duplicate
	}
	if off <= r.off {
		d := data[r.off-off:]
		r.off = end
		return d, true
	}
	limit := maxBuffered
	if r.crypt {
		limit = maxCryptoBuffered
	}
	if len(r.arena)+len(data) > limit {
		return nil, false
	}
	if n := len(r.pend); n > 0 {
		last := &r.pend[n-1]
		if last.end == len(r.arena) && last.off+uint64(last.end-last.start) == off {
			r.arena = append(r.arena, data...)
			last.end = len(r.arena)
			return nil, true
		}
	}
	if len(r.pend) == maxSegments {
		return nil, false
	}
	s := segment{off: off, start: len(r.arena)}
	r.arena = append(r.arena, data...)
	s.end = len(r.arena)
	r.pend = append(r.pend, s)
	return nil, true
}

// next returns buffered bytes that have become deliverable, or nil.
func (r *reasm) next() []byte {
	for i := 0; i < len(r.pend); i++ {
		s := r.pend[i]
		end := s.off + uint64(s.end-s.start)
		if s.off > r.off {
			continue
		}
		r.pend[i] = r.pend[len(r.pend)-1]
		r.pend = r.pend[:len(r.pend)-1]
		i--
		if end <= r.off {
			continue
		}
		d := r.arena[s.start+int(r.off-s.off) : s.end]
		r.off = end
		return d
	}
	if len(r.pend) == 0 {
		r.arena = r.arena[:0]
	}
	return nil
}

// finished reports that every byte up to the final size was delivered.
func (r *reasm) finished() bool { return r.fin >= 0 && r.off == uint64(r.fin) }
