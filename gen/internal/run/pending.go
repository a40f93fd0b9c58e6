package run

// pendingRing is a loop's queue of due but unsent requests (open loop), kept
// as their intended send times and, in a run with several targets, their
// targets. Its capacity is fixed when the run starts: requests that find it
// full are counted as dropped.
type pendingRing struct {
	buf        []int64
	tgt        []int32 // nil with one target (every request is target 0)
	head, size int
}

func newPendingRing(capacity int, targets bool) pendingRing {
	if capacity < 1 {
		capacity = 1
	}
	r := pendingRing{buf: make([]int64, capacity)}
	if targets {
		r.tgt = make([]int32, capacity)
	}
	return r
}

func (r *pendingRing) len() int   { return r.size }
func (r *pendingRing) full() bool { return r.size == len(r.buf) }

// push appends an intended time and its target; the caller checks full
// first.
func (r *pendingRing) push(t int64, tgt int32) {
	i := (r.head + r.size) % len(r.buf)
	r.buf[i] = t
	if r.tgt != nil {
		r.tgt[i] = tgt
	}
	r.size++
}

// pushFront puts a request back at the head, to be popped first (a request
// that went out and must be sent again); the caller checks full.
func (r *pendingRing) pushFront(t int64, tgt int32) {
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = t
	if r.tgt != nil {
		r.tgt[r.head] = tgt
	}
	r.size++
}

// pop removes and returns the oldest intended time and its target.
func (r *pendingRing) pop() (int64, int32) {
	t, tgt := r.buf[r.head], int32(0)
	if r.tgt != nil {
		tgt = r.tgt[r.head]
	}
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return t, tgt
}
