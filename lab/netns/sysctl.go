package netns

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ProcSys is where sysctl files live (a variable for tests).
var ProcSys = "/proc/sys"

// sysctlKey is a dotted sysctl name: net.ipv4.tcp_tw_reuse.
var sysctlKey = regexp.MustCompile(`^[a-z0-9_]+(\.[A-Za-z0-9_-]+)+$`)

// CheckSysctl says whether key may be set in a lab's namespace: only keys
// each network namespace has its own copy of (net.ipv4.*, net.ipv6.*,
// net.core.somaxconn), so setting one never changes the host; and its
// file must exist under /proc/sys. The error names the key.
func CheckSysctl(key string) error {
	if !sysctlKey.MatchString(key) {
		return fmt.Errorf("sysctl %q is not a sysctl name: write it like net.ipv4.tcp_tw_reuse", key)
	}
	if !strings.HasPrefix(key, "net.ipv4.") && !strings.HasPrefix(key, "net.ipv6.") && key != "net.core.somaxconn" {
		return fmt.Errorf("sysctl %s is not one a network namespace has its own copy of: only net.ipv4.*, net.ipv6.* and net.core.somaxconn can be set per scenario", key)
	}
	if _, err := os.Stat(sysctlFile(key)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sysctl %s does not exist on this kernel (no %s)", key, sysctlFile(key))
		}
		return fmt.Errorf("sysctl %s: %v", key, err)
	}
	return nil
}

// CheckSysctlValue refuses values no sysctl takes: empty, or with a line
// break.
func CheckSysctlValue(key, value string) error {
	if strings.TrimSpace(value) == "" || strings.ContainsAny(value, "\r\n") || len(value) > 256 {
		return fmt.Errorf("sysctl %s: value %q: give one line, e.g. 1 or \"32768 60999\"", key, value)
	}
	return nil
}

// sysctlFile is key's file under ProcSys.
func sysctlFile(key string) string {
	return filepath.Join(ProcSys, strings.ReplaceAll(key, ".", "/"))
}

// NormalizeSysctl writes a sysctl value as the kernel reads it back, its
// fields separated by one space ("32768\t60999" -> "32768 60999").
func NormalizeSysctl(v string) string { return strings.Join(strings.Fields(v), " ") }

// SetSysctl writes key = value inside the role's namespace, where the net
// sysctl files answer for the namespace of the thread that opens them.
func (l *Lab) SetSysctl(role, key, value string) error {
	if err := CheckSysctl(key); err != nil {
		return err
	}
	s, err := l.space(role)
	if err != nil {
		return err
	}
	return inNS(s.handle, func() error {
		if err := os.WriteFile(sysctlFile(key), []byte(value), 0); err != nil {
			return fmt.Errorf("set sysctl %s=%s in namespace %s: %v", key, value, s.name, err)
		}
		return nil
	})
}

// Sysctl reads key inside the role's namespace (normalized, see
// NormalizeSysctl).
func (l *Lab) Sysctl(role, key string) (string, error) {
	s, err := l.space(role)
	if err != nil {
		return "", err
	}
	var out string
	err = inNS(s.handle, func() error {
		b, err := os.ReadFile(sysctlFile(key))
		if err != nil {
			return fmt.Errorf("read sysctl %s in namespace %s: %v", key, s.name, err)
		}
		out = NormalizeSysctl(string(b))
		return nil
	})
	return out, err
}

// TCPExt reads the TcpExt counters of the role's namespace
// (/proc/net/netstat: TCPTimeWaitOverflow, TW, TWRecycled,
// ListenOverflows, ListenDrops, ...).
func (l *Lab) TCPExt(role string) (map[string]uint64, error) {
	s, err := l.space(role)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = inNS(s.handle, func() error {
		var err error
		b, err = os.ReadFile("/proc/thread-self/net/netstat")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read netstat in namespace %s: %v", s.name, err)
	}
	return ParseNetstat(b, "TcpExt")
}

// ParseNetstat reads one group of a /proc/net/netstat text: a header line
// "TcpExt: Name1 Name2 ..." followed by "TcpExt: v1 v2 ...".
func ParseNetstat(b []byte, group string) (map[string]uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	prefix := group + ":"
	var names []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != prefix {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		if len(f)-1 != len(names) {
			return nil, fmt.Errorf("netstat %s: %d names but %d values", group, len(names), len(f)-1)
		}
		out := make(map[string]uint64, len(names))
		for i, n := range names {
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("netstat %s %s: %v", group, n, err)
			}
			out[n] = v
		}
		return out, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("netstat has no %s lines", group)
}
