// Package sockdiag counts TCP sockets in TIME_WAIT through
// NETLINK_SOCK_DIAG: the generator counts its own (to its target) and the
// lab counts the host's by port. The kernel dumps only sockets in TIME_WAIT
// (state filter) and a filter picks the ones counted. A dump walks the
// kernel's whole connection table, so it costs milliseconds: callers sample
// it at most once a second.
//
// Imports: a leaf of internal/ (helpers loadlab's packages share); it
// imports no other loadlab package.
package sockdiag

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"

	"golang.org/x/sys/unix"
)

const (
	tcpTimeWait       = 6
	sizeofNlMsghdr    = 16
	sizeofInetDiagReq = 56
	sizeofInetDiagMsg = 72
)

// Open opens a sock_diag socket in the calling thread's network namespace;
// it keeps answering for that namespace. Close it with unix.Close.
func Open() (int, error) {
	return unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
}

var (
	diagMu  sync.Mutex
	diagBuf = make([]byte, 64<<10)
)

// twSocket is what a filter sees of one TIME_WAIT socket.
type twSocket struct {
	sport, dport uint16
	dst          []byte // remote address, 4 or 16 bytes
}

// CountTo returns how many TCP sockets to dst are in TIME_WAIT in the
// namespace of fd (from Open), or -1 if it cannot tell.
func CountTo(fd int, dst netip.AddrPort) int {
	want := dst.Addr().AsSlice()
	port := dst.Port()
	n, err := dumpTimeWait(fd, familyOf(dst.Addr()), func(s twSocket) bool {
		return s.dport == port && string(s.dst[:len(want)]) == string(want)
	})
	if err != nil {
		return -1
	}
	return n
}

// CountPort counts the TCP sockets in TIME_WAIT in the calling thread's
// network namespace whose local or remote port is port (0: all), IPv4 and
// IPv6.
func CountPort(port uint16) (int, error) {
	fd, err := Open()
	if err != nil {
		return 0, fmt.Errorf("cannot list TCP sockets (sock_diag): %v", err)
	}
	defer unix.Close(fd)
	total := 0
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		n, err := dumpTimeWait(fd, fam, func(s twSocket) bool {
			return port == 0 || s.sport == port || s.dport == port
		})
		if err != nil {
			return 0, fmt.Errorf("cannot list TCP sockets (sock_diag): %v", err)
		}
		total += n
	}
	return total, nil
}

func familyOf(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// dumpTimeWait asks sock_diag on fd for one family's TIME_WAIT sockets and
// counts those keep accepts.
func dumpTimeWait(fd int, family uint8, keep func(twSocket) bool) (int, error) {
	if fd < 0 {
		return 0, fmt.Errorf("no sock_diag socket")
	}
	diagMu.Lock()
	defer diagMu.Unlock()
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
		return 0, err
	}
	count := 0
	for {
		n, _, err := unix.Recvfrom(fd, diagBuf, 0)
		if err != nil {
			return 0, err
		}
		b := diagBuf[:n]
		for len(b) >= sizeofNlMsghdr {
			l := int(ne.Uint32(b[0:]))
			typ := ne.Uint16(b[4:])
			if l < sizeofNlMsghdr || l > len(b) {
				return 0, fmt.Errorf("malformed netlink message")
			}
			switch typ {
			case unix.NLMSG_DONE:
				return count, nil
			case unix.NLMSG_ERROR:
				return 0, fmt.Errorf("sock_diag answered with an error")
			}
			// struct inet_diag_msg: family, state, timer, retrans, then
			// sport, dport (network order), src[16], dst[16], ...
			m := b[sizeofNlMsghdr:l]
			if len(m) >= sizeofInetDiagMsg && m[1] == tcpTimeWait {
				s := twSocket{
					sport: binary.BigEndian.Uint16(m[4:]),
					dport: binary.BigEndian.Uint16(m[6:]),
					dst:   m[24:40],
				}
				if keep(s) {
					count++
				}
			}
			b = b[(l+3)&^3:]
		}
	}
}
