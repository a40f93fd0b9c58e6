package netns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink/nl"
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
// It reads the namespace's /proc/net/sockstat ("tw N"), which the kernel
// keeps as a counter: constant time, unlike a sock_diag dump, which walks
// the whole connection hash table (about 10 ms per call here).
func (l *Lab) TimeWait(role string) (int, error) {
	s, err := l.space(role)
	if err != nil {
		return 0, err
	}
	s.diagMu.Lock()
	defer s.diagMu.Unlock()
	if s.sockstat == nil {
		// The file answers for the namespace it was opened in.
		err := inNS(s.handle, func() error {
			var err error
			s.sockstat, err = os.Open("/proc/thread-self/net/sockstat")
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("cannot open sockstat in namespace %s: %v", s.name, err)
		}
	}
	var buf [512]byte
	n, err := s.sockstat.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0, fmt.Errorf("read sockstat in namespace %s: %v", s.name, err)
	}
	return parseSockstatTW(buf[:n])
}

// parseSockstatTW returns N from the "TCP: ... tw N ..." line of sockstat.
func parseSockstatTW(b []byte) (int, error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "TCP:" {
			continue
		}
		for i := 1; i+1 < len(f); i += 2 {
			if f[i] == "tw" {
				return strconv.Atoi(f[i+1])
			}
		}
	}
	return 0, fmt.Errorf("sockstat has no TCP tw count")
}

// HostTimeWait counts TIME_WAIT TCP sockets in the calling thread's network
// namespace (the host, in loopback mode) whose local or remote port is port;
// port 0 counts all of them, including unrelated traffic.
func HostTimeWait(port uint16) (int, error) {
	return countTimeWait(nil, port)
}
