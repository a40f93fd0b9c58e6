package gen

// pendingRing is a loop's queue of due but unsent requests (open loop), kept
// as their intended send times. Its capacity is fixed when the run starts:
// requests that find it full are counted as dropped.
type pendingRing struct {
	buf        []int64
	head, size int
}

func newPendingRing(capacity int) pendingRing {
	if capacity < 1 {
		capacity = 1
	}
	return pendingRing{buf: make([]int64, capacity)}
}

func (r *pendingRing) len() int   { return r.size }
func (r *pendingRing) full() bool { return r.size == len(r.buf) }

// push appends an intended time; the caller checks full first.
func (r *pendingRing) push(t int64) {
	r.buf[(r.head+r.size)%len(r.buf)] = t
	r.size++
}

// pushFront puts an intended time back at the head, to be popped first (a
// request that went out and must be sent again); the caller checks full.
func (r *pendingRing) pushFront(t int64) {
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = t
	r.size++
}

// pop removes and returns the oldest intended time.
func (r *pendingRing) pop() int64 {
	t := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return t
}
