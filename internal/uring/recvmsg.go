package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ParseRecvmsg splits a buffer filled by a multishot RECVMSG armed with a
// msghdr of nameLen and ctrlLen: the control messages the kernel wrote and
// the payload. ok is false when the buffer is too short to hold its header.
func ParseRecvmsg(b []byte, nameLen, ctrlLen int) (control, payload []byte, ok bool) {
	const hdr = int(unsafe.Sizeof(RecvmsgOut{}))
	if len(b) < hdr+nameLen+ctrlLen {
		return nil, nil, false
	}
	out := (*RecvmsgOut)(unsafe.Pointer(&b[0]))
	c := hdr + nameLen
	p := c + ctrlLen
	control = b[c : c+min(int(out.Controllen), ctrlLen)]
	payload = b[p:min(p+int(out.Payloadlen), len(b))]
	return control, payload, true
}

// TimestampNs returns the SCM_TIMESTAMPNS receive time (wall clock, ns) in
// the control messages b, or 0 when there is none.
func TimestampNs(b []byte) int64 {
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(b) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && l >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
			return ts.Sec*1e9 + ts.Nsec
		}
		b = b[min(unix.CmsgSpace(l-unix.CmsgLen(0)), len(b)):]
	}
	return 0
}
