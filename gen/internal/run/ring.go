package run

// Ring is a fixed-capacity FIFO of connection slot indexes: the open
// loop's ready ring of the engines whose connections take more than one
// request (HTTP/2's streams) or take turns (lean HTTP/3).
type Ring struct {
	buf        []int32
	head, size int
}

// NewRing returns a ring of capacity n (at least 1).
func NewRing(n int) Ring { return Ring{buf: make([]int32, max(n, 1))} }

func (r *Ring) Len() int     { return r.size }
func (r *Ring) Front() int32 { return r.buf[r.head] }
func (r *Ring) Push(v int32) { r.buf[(r.head+r.size)%len(r.buf)] = v; r.size++ }
func (r *Ring) Pop() (v int32) {
	v = r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}

// PopLast removes and returns the last element of *s (a free list).
func PopLast[T any](s *[]T) (T, bool) {
	n := len(*s)
	if n == 0 {
		var zero T
		return zero, false
	}
	v := (*s)[n-1]
	*s = (*s)[:n-1]
	return v, true
}
