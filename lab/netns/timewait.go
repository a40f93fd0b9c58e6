package netns

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// tcpTimeWait is the kernel's TCP_TIME_WAIT state number.
const tcpTimeWait = 6

// diagReq is struct inet_diag_req_v2 with an empty socket id: a dump of
// one family's TCP sockets in the given states.
type diagReq struct {
	family, protocol uint8
	states           uint32
}

// Len is the size of struct inet_diag_req_v2.
func (r *diagReq) Len() int { return 56 }

// Serialize encodes the request (the states mask is host byte order).
func (r *diagReq) Serialize() []byte {
	b := make([]byte, r.Len())
	b[0], b[1] = r.family, r.protocol
	nl.NativeEndian().PutUint32(b[4:8], r.states)
	return b
}

// countTimeWait asks sock_diag on socket s for TIME_WAIT TCP sockets of both
// families and counts those with port as local or remote port (0: all).
func countTimeWait(s *nl.NetlinkSocket, port uint16) (int, error) {
	n := 0
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := nl.NewNetlinkRequest(nl.SOCK_DIAG_BY_FAMILY, unix.NLM_F_DUMP)
		req.AddData(&diagReq{family: fam, protocol: unix.IPPROTO_TCP, states: 1 << tcpTimeWait})
		if s != nil {
			req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_INET_DIAG: {Socket: s}}
		}
		err := req.ExecuteIter(unix.NETLINK_INET_DIAG, nl.SOCK_DIAG_BY_FAMILY, func(msg []byte) bool {
			// struct inet_diag_msg: family, state, timer, retrans, then
			// sport and dport in network byte order.
			if len(msg) < 8 || msg[1] != tcpTimeWait {
				return true
			}
			if port != 0 && binary.BigEndian.Uint16(msg[4:6]) != port && binary.BigEndian.Uint16(msg[6:8]) != port {
				return true
			}
			n++
			return true
		})
		if err != nil && !errors.Is(err, nl.ErrDumpInterrupted) { // interrupted: the count is approximate
			return 0, fmt.Errorf("cannot list TCP sockets (sock_diag): %v", err)
		}
	}
	return n, nil
}

// TimeWait counts the TCP sockets in TIME_WAIT inside the role's namespace.
func (l *Lab) TimeWait(role string) (int, error) {
	s, err := l.space(role)
	if err != nil {
		return 0, err
	}
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	if s.diag == nil {
		// A netlink socket belongs to the namespace it was created in.
		err := inNS(s.handle, func() error {
			var err error
			s.diag, err = nl.GetNetlinkSocketAt(netns.None(), netns.None(), unix.NETLINK_INET_DIAG)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("cannot open sock_diag in namespace %s: %v", s.name, err)
		}
	}
	return countTimeWait(s.diag, 0)
}

// HostTimeWait counts TIME_WAIT TCP sockets in the calling thread's network
// namespace (the host, in loopback mode) whose local or remote port is port;
// port 0 counts all of them, including unrelated traffic.
func HostTimeWait(port uint16) (int, error) {
	return countTimeWait(nil, port)
}
