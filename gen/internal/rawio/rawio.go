// Package rawio holds the event loops' raw system calls on non-blocking
// descriptors: read and write, recvmsg with the kernel's receive timestamp
// (RxReader), batched UDP datagrams with sendmmsg and recvmmsg (Sender,
// Receiver: the lean HTTP/3 loops), and the probe for epoll_pwait2.
//
// The loops make their socket calls with RawSyscall: reads and writes on
// non-blocking sockets return at once, and the loop's epoll wait keeps its
// Go processor (P) while it sleeps. The usual Syscall path hands the P to
// another thread whenever a call lasts longer than a scheduler tick and
// takes it back afterwards: on a 1-CPU run that is several futex calls and
// context switches per request, more than the request itself costs. The run
// raises GOMAXPROCS to loops+1 so the run's other goroutines (aggregator,
// signal handling) keep a P of their own.
//
// Imports: only internal/uring among loadlab's packages; as an internal
// package of gen, only gen and its subpackages can import it.
package rawio

import (
	"github.com/loadlab/loadlab/internal/uring"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read reads from a non-blocking fd. Errors are unix.Errno values.
func Read(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Write writes to a non-blocking fd. Errors are unix.Errno values.
func Write(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// ProbePwait2 reports whether epoll_pwait2 (Linux 5.11) works here: an
// older kernel answers ENOSYS, a seccomp filter (some container runtimes)
// EPERM or ENOSYS. Without it the loops fall back to a timerfd.
func ProbePwait2() bool {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	defer unix.Close(epfd)
	var ev [1]unix.EpollEvent
	var ts unix.Timespec
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd),
		uintptr(unsafe.Pointer(&ev[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0)
	return e == 0
}

// RxReader reads a socket with recvmsg and keeps the kernel's receive
// timestamp (SO_TIMESTAMPNS: wall-clock time the last segment read arrived)
// for the caller to take. Its buffers are its own, so reads do not
// allocate. One per loop; not safe for concurrent use.
type RxReader struct {
	msg  unix.Msghdr
	iov  unix.Iovec
	oob  [64]byte
	last int64 // wall ns of the last read's last segment, 0 = none
}

func (r *RxReader) Init() {
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	r.msg.Control = &r.oob[0]
}

// Read is Read through recvmsg.
func (r *RxReader) Read(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.iov.Base = &b[0]
	r.iov.SetLen(len(b))
	r.msg.SetControllen(len(r.oob))
	n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&r.msg)), 0)
	if e != 0 {
		return 0, e
	}
	if n > 0 {
		r.note()
	}
	return int(n), nil
}

// note finds the SCM_TIMESTAMPNS control message of the last recvmsg.
func (r *RxReader) note() {
	if ts := uring.TimestampNs(r.oob[:r.msg.Controllen]); ts != 0 {
		r.last = ts
	}
}

// Take returns the last timestamp once.
func (r *RxReader) Take() int64 {
	t := r.last
	r.last = 0
	return t
}
