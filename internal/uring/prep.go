package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Prep methods fill a zeroed entry from GetSQE. Memory an entry points
// at (buffers, msghdrs, sockaddrs, timespecs) is read or written by the
// kernel until the request completes: it must stay alive and in place that
// long, i.e. be heap memory the caller keeps (never a stack variable,
// which Go may move).

func ptr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}

// PrepNop is a no-op request.
func (s *SQE) PrepNop(userData uint64) {
	s.Opcode = OpNop
	s.UserData = userData
}

// PrepSend sends b on the connected socket fd. With SqeIOLink the next
// entry starts only once this one succeeded; with SqeCQESkipSuccess a
// complete send posts no completion (a failure still does). MSG_WAITALL
// makes the kernel finish a short send itself (Linux 5.19).
func (s *SQE) PrepSend(fd int, b []byte, msgFlags uint32, userData uint64) {
	s.Opcode = OpSend
	s.Fd = int32(fd)
	s.Addr = ptr(b)
	s.Len = uint32(len(b))
	s.OpFlags = msgFlags
	s.UserData = userData
}

// PrepRecv receives into b.
func (s *SQE) PrepRecv(fd int, b []byte, msgFlags uint32, userData uint64) {
	s.Opcode = OpRecv
	s.Fd = int32(fd)
	s.Addr = ptr(b)
	s.Len = uint32(len(b))
	s.OpFlags = msgFlags
	s.UserData = userData
}

// PrepRecvMultishot arms a multishot receive on fd into the buffers of
// group bgid: each arrival posts a completion with a buffer (CQE.Buffer)
// and CQE.More while the request stays armed. It ends (no More) at the end
// of the stream, on an error, or with ENOBUFS when the group ran dry.
func (s *SQE) PrepRecvMultishot(fd int, bgid uint16, userData uint64) {
	s.Opcode = OpRecv
	s.Fd = int32(fd)
	s.Ioprio = RecvMultishot
	s.Flags = SqeBufferSelect
	s.BufIndex = bgid
	s.UserData = userData
}

// PrepRecvmsg receives one message into msg (its iovecs and control
// buffer).
func (s *SQE) PrepRecvmsg(fd int, msg *unix.Msghdr, msgFlags uint32, userData uint64) {
	s.Opcode = OpRecvmsg
	s.Fd = int32(fd)
	s.Addr = uint64(uintptr(unsafe.Pointer(msg)))
	s.Len = 1
	s.OpFlags = msgFlags
	s.UserData = userData
}

// PrepRecvmsgMultishot arms a multishot recvmsg on fd into the buffers of
// group bgid. msg gives only the sizes of the name and control parts
// (Namelen, Controllen; no iovecs): each buffer then holds a RecvmsgOut,
// the name, the control messages and the payload (see ParseRecvmsg).
func (s *SQE) PrepRecvmsgMultishot(fd int, msg *unix.Msghdr, bgid uint16, userData uint64) {
	s.PrepRecvmsg(fd, msg, 0, userData)
	s.Ioprio = RecvMultishot
	s.Flags = SqeBufferSelect
	s.BufIndex = bgid
}

// PrepTimeout completes (with -ETIME) after ts, a relative time unless
// flags has TimeoutAbs (then on CLOCK_MONOTONIC), or once count other
// completions arrived (count 0: the time only).
func (s *SQE) PrepTimeout(ts *unix.Timespec, count uint32, flags uint32, userData uint64) {
	s.Opcode = OpTimeout
	s.Fd = -1
	s.Addr = uint64(uintptr(unsafe.Pointer(ts)))
	s.Len = 1
	s.Off = uint64(count)
	s.OpFlags = flags
	s.UserData = userData
}

// PrepConnect connects fd to the raw socket address sa of length n.
func (s *SQE) PrepConnect(fd int, sa unsafe.Pointer, n uint32, userData uint64) {
	s.Opcode = OpConnect
	s.Fd = int32(fd)
	s.Addr = uint64(uintptr(sa))
	s.Off = uint64(n)
	s.UserData = userData
}

// PrepClose closes fd.
func (s *SQE) PrepClose(fd int, userData uint64) {
	s.Opcode = OpClose
	s.Fd = int32(fd)
	s.UserData = userData
}

// PrepCancel cancels the request whose user data is target.
func (s *SQE) PrepCancel(target uint64, userData uint64) {
	s.Opcode = OpAsyncCancel
	s.Fd = -1
	s.Addr = target
	s.UserData = userData
}

// PrepPollMultishot posts a completion each time fd has one of the poll
// events.
func (s *SQE) PrepPollMultishot(fd int, events uint32, userData uint64) {
	s.Opcode = OpPollAdd
	s.Fd = int32(fd)
	s.OpFlags = events
	s.Len = PollAddMulti
	s.UserData = userData
}
