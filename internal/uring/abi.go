package uring

// The kernel's io_uring ABI (include/uapi/linux/io_uring.h), the parts this
// package uses. golang.org/x/sys/unix has the system call numbers only.

// Opcodes (enum io_uring_op).
const (
	OpNop         = 0
	OpPollAdd     = 6
	OpRecvmsg     = 10
	OpTimeout     = 11
	OpAsyncCancel = 14
	OpConnect     = 16
	OpClose       = 19
	OpSend        = 26
	OpRecv        = 27
	opLast        = 64 // probe at least this many opcodes
)

// SQE flags (IOSQE_*).
const (
	SqeFixedFile      = 1 << 0
	SqeIODrain        = 1 << 1
	SqeIOLink         = 1 << 2
	SqeIOHardlink     = 1 << 3
	SqeAsync          = 1 << 4
	SqeBufferSelect   = 1 << 5
	SqeCQESkipSuccess = 1 << 6
)

// Setup flags (IORING_SETUP_*).
const (
	SetupCQSize       = 1 << 3
	SetupClamp        = 1 << 4
	SetupSubmitAll    = 1 << 7
	SetupCoopTaskrun  = 1 << 8
	SetupSingleIssuer = 1 << 12
	SetupDeferTaskrun = 1 << 13
)

// Features the kernel reports at setup (IORING_FEAT_*).
const (
	FeatSingleMmap = 1 << 0
	FeatNoDrop     = 1 << 1
	FeatFastPoll   = 1 << 5
	FeatExtArg     = 1 << 8
	FeatCQESkip    = 1 << 11
)

// io_uring_enter flags.
const (
	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3
)

// io_uring_register opcodes.
const (
	registerProbe      = 8
	registerPbufRing   = 22
	unregisterPbufRing = 23
)

// CQE flags.
const (
	CQEFBuffer    = 1 << 0
	CQEFMore      = 1 << 1
	CQEFSockEmpty = 1 << 2 // IORING_CQE_F_SOCK_NONEMPTY, inverted meaning: see CQE.SockNonEmpty
	cqeBufShift   = 16
)

// Send/recv flags, in the SQE's ioprio field.
const (
	RecvPollFirst = 1 << 0
	RecvMultishot = 1 << 1
)

// Timeout flags.
const (
	TimeoutAbs = 1 << 0
)

// Poll flags (in the SQE's len field for POLL_ADD).
const (
	PollAddMulti = 1 << 0
)

// mmap offsets.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// params is struct io_uring_params (120 bytes).
type params struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFd uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  sqringOffsets
	CQOff                                                                  cqringOffsets
}

// SQE is a submission queue entry (struct io_uring_sqe, 64 bytes). The
// Prep methods fill it; anything they do not set is zero.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64 // also addr2
	Addr        uint64
	Len         uint32
	OpFlags     uint32 // msg_flags, timeout_flags, cancel_flags, poll32_events
	UserData    uint64
	BufIndex    uint16 // also buf_group
	Personality uint16
	FileIndex   uint32 // also splice_fd_in, addr_len
	Addr3       uint64
	pad2        uint64 //nolint:unused // padding: the kernel's struct io_uring_sqe is 64 bytes
}

// CQE is a completion queue entry (struct io_uring_cqe, 16 bytes).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// More reports that a multishot request stays armed after this completion.
func (c *CQE) More() bool { return c.Flags&CQEFMore != 0 }

// Buffer returns the provided buffer's id when the completion carries one.
func (c *CQE) Buffer() (id uint16, ok bool) {
	return uint16(c.Flags >> cqeBufShift), c.Flags&CQEFBuffer != 0
}

// getEventsArg is struct io_uring_getevents_arg (IORING_ENTER_EXT_ARG).
type getEventsArg struct {
	Sigmask   uint64
	SigmaskSz uint32
	MinWaitUs uint32
	Ts        uint64
}

// bufReg is struct io_uring_buf_reg.
type bufReg struct {
	RingAddr    uint64
	RingEntries uint32
	Bgid        uint16
	Flags       uint16
	Resv        [3]uint64
}

// probeHeader is struct io_uring_probe, followed by ops.
type probeHeader struct {
	LastOp uint8
	OpsLen uint8
	Resv   uint16
	Resv2  [3]uint32
}

type probeOp struct {
	Op    uint8
	Resv  uint8
	Flags uint16
	Resv2 uint32
}

const opSupported = 1 << 0

// RecvmsgOut is struct io_uring_recvmsg_out: the head of each buffer a
// multishot RECVMSG fills, followed by the name, the control messages and
// the payload.
type RecvmsgOut struct {
	Namelen    uint32
	Controllen uint32
	Payloadlen uint32
	Flags      uint32
}
