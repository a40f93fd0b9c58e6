package uring

import (
	"testing"
	"unsafe"
)

// The structs must have the kernel's sizes, or every call misreads them.
func TestABISizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"io_uring_params", unsafe.Sizeof(params{}), 120},
		{"io_uring_sqe", unsafe.Sizeof(SQE{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(CQE{}), 16},
		{"io_uring_getevents_arg", unsafe.Sizeof(getEventsArg{}), 24},
		{"io_uring_buf_reg", unsafe.Sizeof(bufReg{}), 40},
		{"io_uring_probe", unsafe.Sizeof(probeHeader{}), 16},
		{"io_uring_probe_op", unsafe.Sizeof(probeOp{}), 8},
		{"io_uring_recvmsg_out", unsafe.Sizeof(RecvmsgOut{}), 16},
		{"io_uring_buf", unsafe.Sizeof(bufEntry{}), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.got, c.want)
		}
	}
	var s SQE
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"fd", unsafe.Offsetof(s.Fd), 4},
		{"off", unsafe.Offsetof(s.Off), 8},
		{"addr", unsafe.Offsetof(s.Addr), 16},
		{"len", unsafe.Offsetof(s.Len), 24},
		{"op_flags", unsafe.Offsetof(s.OpFlags), 28},
		{"user_data", unsafe.Offsetof(s.UserData), 32},
		{"buf_index", unsafe.Offsetof(s.BufIndex), 40},
		{"file_index", unsafe.Offsetof(s.FileIndex), 44},
		{"addr3", unsafe.Offsetof(s.Addr3), 48},
	} {
		if c.got != c.want {
			t.Errorf("sqe.%s at %d, want %d", c.name, c.got, c.want)
		}
	}
}
