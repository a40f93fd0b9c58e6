package uring

import (
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Features is what this kernel's io_uring offers the loops.
type Features struct {
	Err error // io_uring_setup failed (not built in, kernel.io_uring_disabled, seccomp): nothing else is set

	SingleIssuer bool // IORING_SETUP_SINGLE_ISSUER (6.0)
	DeferTaskrun bool // IORING_SETUP_DEFER_TASKRUN (6.1)
	ExtArg       bool // io_uring_enter with a timeout (5.11)
	CQESkip      bool // IOSQE_CQE_SKIP_SUCCESS (5.17)
	NoDrop       bool // completions are never dropped (5.5)
	BufRing      bool // provided buffer rings (5.19)
	RecvMulti    bool // multishot RECV with provided buffers (6.0), checked on a socket pair
	RecvmsgMulti bool // multishot RECVMSG (6.0), checked on a socket pair

	ops [opLast]bool
}

// Op reports whether the kernel knows opcode op (IORING_REGISTER_PROBE).
func (f *Features) Op(op int) bool { return op >= 0 && op < opLast && f.ops[op] }

// Missing lists what the network loops need and this kernel lacks (empty:
// all there).
func (f *Features) Missing() []string {
	if f.Err != nil {
		return []string{f.Err.Error()}
	}
	var m []string
	for _, c := range []struct {
		ok   bool
		name string
	}{
		{f.SingleIssuer, "SETUP_SINGLE_ISSUER"}, {f.DeferTaskrun, "SETUP_DEFER_TASKRUN"},
		{f.ExtArg, "FEAT_EXT_ARG"}, {f.CQESkip, "FEAT_CQE_SKIP"}, {f.NoDrop, "FEAT_NODROP"},
		{f.BufRing, "provided buffer rings"}, {f.RecvMulti, "multishot recv"}, {f.RecvmsgMulti, "multishot recvmsg"},
		{f.Op(OpSend), "OP_SEND"}, {f.Op(OpRecv), "OP_RECV"}, {f.Op(OpRecvmsg), "OP_RECVMSG"},
		{f.Op(OpConnect), "OP_CONNECT"}, {f.Op(OpAsyncCancel), "OP_ASYNC_CANCEL"}, {f.Op(OpTimeout), "OP_TIMEOUT"},
		{f.Op(OpPollAdd), "OP_POLL_ADD"},
	} {
		if !c.ok {
			m = append(m, c.name)
		}
	}
	return m
}

// String is a one-line summary.
func (f *Features) String() string {
	if m := f.Missing(); len(m) > 0 {
		return "io_uring unusable: " + strings.Join(m, ", ")
	}
	return "io_uring: single issuer, defer taskrun, provided buffer rings, multishot recv/recvmsg"
}

// LoopFlags are the setup flags for a loop's ring.
const LoopFlags = SetupSingleIssuer | SetupDeferTaskrun

// Probe finds out what io_uring can do here: it makes a small ring (on a
// locked thread, for SINGLE_ISSUER), asks for the opcodes, registers a
// buffer ring and runs a multishot RECV and RECVMSG on a socket pair.
func Probe() Features {
	var f Features
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		f.probe()
	}()
	<-done
	return f
}

func (f *Features) probe() {
	r, err := New(8, 0, LoopFlags)
	if err == nil {
		f.SingleIssuer, f.DeferTaskrun = true, true
	} else if r, err = New(8, 0, SetupSingleIssuer); err == nil {
		f.SingleIssuer = true
	} else if r, err = New(8, 0, 0); err != nil {
		f.Err = err
		return
	}
	defer r.Close()
	f.ExtArg = r.features&FeatExtArg != 0
	f.CQESkip = r.features&FeatCQESkip != 0
	f.NoDrop = r.features&FeatNoDrop != 0
	f.probeOps(r)
	br, err := r.NewBufRing(0, 8, 256)
	if err != nil {
		return
	}
	defer br.Close()
	f.BufRing = true
	if f.Op(OpRecv) {
		f.RecvMulti = probeMultishot(r, br, false)
	}
	if f.Op(OpRecvmsg) {
		f.RecvmsgMulti = probeMultishot(r, br, true)
	}
}

func (f *Features) probeOps(r *Ring) {
	const n = 256
	buf := make([]byte, unsafe.Sizeof(probeHeader{})+n*unsafe.Sizeof(probeOp{}))
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerProbe, uintptr(unsafe.Pointer(&buf[0])), n, 0, 0); e != 0 {
		return
	}
	h := (*probeHeader)(unsafe.Pointer(&buf[0]))
	ops := unsafe.Slice((*probeOp)(unsafe.Pointer(&buf[unsafe.Sizeof(probeHeader{})])), n)
	for i := 0; i < int(h.OpsLen) && i < n; i++ {
		if op := int(ops[i].Op); op < opLast && ops[i].Flags&opSupported != 0 {
			f.ops[op] = true
		}
	}
}

// probeMultishot arms a multishot receive on one end of a socket pair,
// writes to the other twice and checks that both arrive with the request
// still armed.
func probeMultishot(r *Ring, br *BufRing, msg bool) bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	hdr := new(unix.Msghdr)
	s := r.GetSQE()
	if msg {
		s.PrepRecvmsgMultishot(fds[0], hdr, br.Group, 1)
	} else {
		s.PrepRecvMultishot(fds[0], br.Group, 1)
	}
	ok := true
	for i := 0; i < 2 && ok; i++ {
		unix.Write(fds[1], []byte("x"))
		if _, err := r.SubmitAndWait(1, int64(1e9)); err != nil {
			return false
		}
		c := r.PeekCQE()
		if c == nil {
			return false
		}
		_, hasBuf := c.Buffer()
		ok = c.Res > 0 && c.More() && hasBuf
		if id, has := c.Buffer(); has {
			br.Recycle(id)
			br.Publish()
		}
		r.Advance(1)
	}
	// Disarm it and wait (a bounded while) for its last completion.
	s = r.GetSQE()
	s.PrepCancel(1, 2)
	for i := 0; i < 10; i++ {
		if _, err := r.SubmitAndWait(1, int64(1e8)); err != nil && err != unix.EINTR {
			return false
		}
		end := false
		for c := r.PeekCQE(); c != nil; c = r.PeekCQE() {
			end = end || c.UserData == 1 && !c.More()
			r.Advance(1)
		}
		if end {
			return ok
		}
	}
	return false
}

// Error wraps a failed completion's result.
func Error(res int32) error {
	if res >= 0 {
		return nil
	}
	return unix.Errno(-res)
}
