package gen

import (
	"encoding/binary"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"
)

// TIME_WAIT accounting through NETLINK_SOCK_DIAG: the kernel dumps only
// sockets in TIME_WAIT (state filter), and we count those whose remote end
// is the target, i.e. the generator's own closed connections.

const (
	tcpTimeWait       = 6
	sizeofNlMsghdr    = 16
	sizeofInetDiagReq = 56
	sizeofInetDiagMsg = 72
)

// openDiag opens a sock_diag socket in the calling thread's network
// namespace; it keeps answering for that namespace.
func openDiag() (int, error) {
	return unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
}

var (
	diagMu  sync.Mutex
	diagBuf = make([]byte, 64<<10)
)

// countTimeWait returns how many TCP sockets to dst are in TIME_WAIT, or -1
// if it cannot tell.
func countTimeWait(fd int, dst netip.AddrPort) int {
	if fd < 0 {
		return -1
	}
	diagMu.Lock()
	defer diagMu.Unlock()
	family := uint8(unix.AF_INET)
	if dst.Addr().Is6() {
		family = unix.AF_INET6
	}
	var req [sizeofNlMsghdr + sizeofInetDiagReq]byte
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], 1)
	req[16] = family
	req[17] = unix.IPPROTO_TCP
	ne.PutUint32(req[20:], 1<<tcpTimeWait)
	if err := unix.Sendto(fd, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return -1
	}
	want := dst.Addr().AsSlice()
	port := dst.Port()
	count := 0
	for {
		n, _, err := unix.Recvfrom(fd, diagBuf, 0)
		if err != nil {
			return -1
		}
		b := diagBuf[:n]
		for len(b) >= sizeofNlMsghdr {
			l := int(ne.Uint32(b[0:]))
			typ := ne.Uint16(b[4:])
			if l < sizeofNlMsghdr || l > len(b) {
				return -1
			}
			switch typ {
			case unix.NLMSG_DONE:
				return count
			case unix.NLMSG_ERROR:
				return -1
			}
			m := b[sizeofNlMsghdr:l]
			if len(m) >= sizeofInetDiagMsg && m[1] == tcpTimeWait {
				dport := binary.BigEndian.Uint16(m[6:])
				if dport == port && string(m[24:24+len(want)]) == string(want) {
					count++
				}
			}
			b = b[(l+3)&^3:]
		}
	}
}
