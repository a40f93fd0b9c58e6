package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bufEntry is struct io_uring_buf. The ring's tail overlays the last 16
// bits of its first entry.
type bufEntry struct {
	Addr uint64
	Len  uint32
	Bid  uint16
	Resv uint16
}

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING, Linux
// 5.19): n buffers of size bytes each in one mapping, which the kernel
// picks from for requests with SqeBufferSelect in group Group, and which
// the owner hands back with Recycle once it is done with them. Not safe for
// concurrent use.
type BufRing struct {
	Group uint16
	size  int
	mask  uint16
	ring  []byte // the entries, page-aligned (mmap)
	bufs  []byte // n*size bytes
	tail  uint16 // local tail; Publish makes it the kernel's
	r     *Ring
}

// NewBufRing registers n buffers (a power of two, at most 32768) of size
// bytes as group bgid on r, all handed to the kernel.
func (r *Ring) NewBufRing(bgid uint16, n, size int) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("buffer ring: %d entries, want a power of two up to 32768", n)
	}
	ringBytes := (n*int(unsafe.Sizeof(bufEntry{})) + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	mem, err := unix.Mmap(-1, 0, ringBytes+n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("buffer ring: mmap: %w", err)
	}
	b := &BufRing{Group: bgid, size: size, mask: uint16(n - 1), ring: mem[:ringBytes], bufs: mem[ringBytes:], r: r}
	reg := bufReg{RingAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), RingEntries: uint32(n), Bgid: bgid}
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		unix.Munmap(mem)
		return nil, fmt.Errorf("io_uring_register(PBUF_RING): %w", e)
	}
	for i := 0; i < n; i++ {
		b.add(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Size is the size of each buffer.
func (b *BufRing) Size() int { return b.size }

// Buf returns buffer id's first n bytes.
func (b *BufRing) Buf(id uint16, n int) []byte {
	off := int(id) * b.size
	return b.bufs[off : off+n : off+b.size]
}

func (b *BufRing) entry(i uint16) *bufEntry {
	return (*bufEntry)(unsafe.Add(unsafe.Pointer(&b.ring[0]), uintptr(i&b.mask)*unsafe.Sizeof(bufEntry{})))
}

func (b *BufRing) add(id uint16) {
	e := b.entry(b.tail)
	e.Addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(id)*b.size])))
	e.Len = uint32(b.size)
	e.Bid = id
	b.tail++
}

// Recycle hands buffer id back for the kernel to fill again (after the
// next Publish).
func (b *BufRing) Recycle(id uint16) { b.add(id) }

// Publish makes the recycled buffers visible to the kernel.
func (b *BufRing) Publish() {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&b.ring[12])), uint32(b.tail)<<16|uint32(*(*uint16)(unsafe.Pointer(&b.ring[12]))))
}

// Close unregisters the group and frees its memory.
func (b *BufRing) Close() error {
	if b.ring == nil {
		return nil
	}
	reg := bufReg{Bgid: b.Group}
	_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(b.r.fd), unregisterPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	mem := unsafe.Slice(&b.ring[0], len(b.ring)+len(b.bufs))
	unix.Munmap(mem)
	b.ring, b.bufs = nil, nil
	if e != 0 {
		return fmt.Errorf("io_uring_register(UNREGISTER_PBUF_RING): %w", e)
	}
	return nil
}
