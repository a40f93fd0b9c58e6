package netns

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/internal/sockdiag"
)

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
	return sockdiag.CountPort(port)
}
