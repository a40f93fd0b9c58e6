// Package uring is a small io_uring binding on raw system calls
// (golang.org/x/sys/unix; no cgo): the rings mmap'd from io_uring_setup,
// submission entries prepared in place, one io_uring_enter that submits and
// waits, provided buffer rings and a feature probe.
//
// A Ring is not safe for concurrent use. Made with SetupSingleIssuer, only
// the thread that created it may submit: create it on a goroutine locked to
// its OS thread (runtime.LockOSThread) and use it only there. With
// SetupDeferTaskrun the kernel runs completions only inside that thread's
// io_uring_enter with GETEVENTS (SubmitAndWait, or Submit's wait 0).
//
// Nothing on the submit and reap path allocates.
//
// It lives in the module's internal/ (not gen/internal/) because two
// programs use it: the generator's loops (gen) and the kernel-floor client
// of the benchmarks (scripts/floor).
//
// Imports: a leaf of internal/ (helpers loadlab's packages share); it
// imports no other loadlab package.
package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ring is one io_uring instance and its mapped queues.
type Ring struct {
	fd       int
	flags    uint32 // setup flags the ring was made with
	features uint32

	sqMem, cqMem, sqeMem []byte

	sqHead, sqTail *uint32
	sqMask         uint32
	sqEntries      uint32
	sqes           *[1 << 15]SQE
	sqLocal        uint32 // tail of the entries prepared but not yet published

	cqHead, cqTail *uint32
	cqMask         uint32
	cqEntries      uint32
	cqes           *[1 << 16]CQE
	cqOverflow     *uint32

	arg getEventsArg
	ts  unix.Timespec
}

// New makes a ring with sqEntries submission entries (a power of two, at
// most 32768), cqEntries completion entries (0: the kernel's default, twice
// sqEntries) and the IORING_SETUP_* flags.
func New(sqEntries, cqEntries, flags uint32) (*Ring, error) {
	var p params
	p.Flags = flags | SetupClamp
	if cqEntries > 0 {
		p.Flags |= SetupCQSize
		p.CQEntries = cqEntries
	}
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(sqEntries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	r := &Ring{fd: int(fd), flags: p.Flags, features: p.Features}
	if err := r.mmap(&p); err != nil {
		unix.Close(r.fd)
		return nil, err
	}
	return r, nil
}

func (r *Ring) mmap(p *params) error {
	sqSize := int(p.SQOff.Array + p.SQEntries*4)
	cqSize := int(p.CQOff.Cqes + p.CQEntries*uint32(unsafe.Sizeof(CQE{})))
	single := p.Features&FeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap sq ring: %w", err)
	}
	r.cqMem = r.sqMem
	if !single {
		if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			unix.Munmap(r.sqMem)
			return fmt.Errorf("mmap cq ring: %w", err)
		}
	}
	sqeSize := int(p.SQEntries) * int(unsafe.Sizeof(SQE{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.unmap()
		return fmt.Errorf("mmap sqes: %w", err)
	}
	sq, cq := unsafe.Pointer(&r.sqMem[0]), unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.SQOff.Head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.SQOff.Tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.SQOff.RingMask))
	r.sqEntries = *(*uint32)(unsafe.Add(sq, p.SQOff.RingEntries))
	r.sqes = (*[1 << 15]SQE)(unsafe.Pointer(&r.sqeMem[0]))
	// The indirection array: entry i is SQE i, once and for all.
	array := unsafe.Add(sq, p.SQOff.Array)
	for i := uint32(0); i < r.sqEntries; i++ {
		*(*uint32)(unsafe.Add(array, 4*i)) = i
	}
	r.sqLocal = atomic.LoadUint32(r.sqTail)
	r.cqHead = (*uint32)(unsafe.Add(cq, p.CQOff.Head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.CQOff.Tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.CQOff.RingMask))
	r.cqEntries = *(*uint32)(unsafe.Add(cq, p.CQOff.RingEntries))
	r.cqOverflow = (*uint32)(unsafe.Add(cq, p.CQOff.Overflow))
	r.cqes = (*[1 << 16]CQE)(unsafe.Add(cq, p.CQOff.Cqes))
	return nil
}

func (r *Ring) unmap() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && &r.cqMem[0] != &r.sqMem[0] {
		unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
}

// Close unmaps the queues and closes the ring (cancelling what is still in
// flight).
func (r *Ring) Close() error {
	if r.fd < 0 {
		return nil
	}
	r.unmap()
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// Fd is the ring's descriptor.
func (r *Ring) Fd() int { return r.fd }

// Features are the IORING_FEAT_* bits the kernel reported.
func (r *Ring) Features() uint32 { return r.features }

// Flags are the IORING_SETUP_* flags the ring was made with.
func (r *Ring) Flags() uint32 { return r.flags }

// SQEntries and CQEntries are the queues' sizes.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }
func (r *Ring) CQEntries() uint32 { return r.cqEntries }

// GetSQE returns the next free submission entry, zeroed, or nil when the
// queue is full (Submit, then ask again). The entry goes to the kernel at
// the next Submit or SubmitAndWait.
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.sqLocal-head >= r.sqEntries {
		return nil
	}
	s := &r.sqes[r.sqLocal&r.sqMask]
	*s = SQE{}
	r.sqLocal++
	return s
}

// NextSQE is GetSQE that submits what is queued when the queue is full. It
// returns nil only when that submission fails.
func (r *Ring) NextSQE() *SQE {
	if s := r.GetSQE(); s != nil {
		return s
	}
	if _, err := r.Submit(); err != nil {
		return nil
	}
	return r.GetSQE()
}

// Queued is the number of prepared entries not yet submitted.
func (r *Ring) Queued() uint32 { return r.sqLocal - atomic.LoadUint32(r.sqTail) }

// Free is the number of entries GetSQE can still hand out before a Submit
// (entries that must go in one submission, like a link, check it first).
func (r *Ring) Free() uint32 { return r.sqEntries - (r.sqLocal - atomic.LoadUint32(r.sqHead)) }

// publish makes the prepared entries visible to the kernel and returns how
// many there are.
func (r *Ring) publish() uint32 {
	n := r.sqLocal - atomic.LoadUint32(r.sqTail)
	atomic.StoreUint32(r.sqTail, r.sqLocal)
	return n
}

// Submit hands the prepared entries to the kernel without waiting (and,
// with DEFER_TASKRUN, runs the completions that are ready). It returns how
// many the kernel took.
func (r *Ring) Submit() (int, error) {
	n := r.publish()
	flags := uintptr(0)
	if r.flags&SetupDeferTaskrun != 0 {
		flags = enterGetEvents // run deferred task work: completions appear
	}
	if n == 0 && flags == 0 {
		return 0, nil
	}
	got, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), 0, flags, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(got), nil
}

// SubmitAndWait hands the prepared entries to the kernel and waits, in the
// same io_uring_enter, until at least min completions are ready or timeout
// nanoseconds have passed (timeout < 0: no limit; min is capped at the
// completion queue's size). A timeout is not an error; a signal ends the
// wait early with unix.EINTR. It is a raw system call: the calling thread
// keeps its Go processor while it sleeps.
func (r *Ring) SubmitAndWait(min uint32, timeout int64) (int, error) {
	n := r.publish()
	flags := uintptr(enterGetEvents)
	var argp, argsz uintptr
	if timeout >= 0 {
		r.ts = unix.NsecToTimespec(timeout)
		r.arg.Ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
		flags |= enterExtArg
		argp, argsz = uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg)
	}
	if min > r.cqEntries {
		min = r.cqEntries
	}
	got, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(min), flags, argp, argsz)
	switch e {
	case 0:
		return int(got), nil
	case unix.ETIME:
		return 0, nil
	}
	return 0, e
}

// Ready is the number of completions waiting to be reaped.
func (r *Ring) Ready() uint32 { return atomic.LoadUint32(r.cqTail) - *r.cqHead }

// PeekCQE returns the oldest unreaped completion, or nil. Advance(1) marks
// it reaped; until then it stays valid.
func (r *Ring) PeekCQE() *CQE {
	head := *r.cqHead
	if head == atomic.LoadUint32(r.cqTail) {
		return nil
	}
	return &r.cqes[head&r.cqMask]
}

// CQEAt returns the i-th unreaped completion (i < Ready()).
func (r *Ring) CQEAt(i uint32) *CQE { return &r.cqes[(*r.cqHead+i)&r.cqMask] }

// Advance marks n completions reaped, freeing their slots.
func (r *Ring) Advance(n uint32) { atomic.StoreUint32(r.cqHead, *r.cqHead+n) }

// Overflowed is the count of completions the kernel had to hold back (or,
// without FeatNoDrop, drop) because the completion queue was full.
func (r *Ring) Overflowed() uint32 { return atomic.LoadUint32(r.cqOverflow) }
