package scenario

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// ReadMachine describes this machine: host, kernel, Go, the CPUs this
// process may use and the TCP settings that decide port exhaustion (read
// on the host; a new network namespace starts from the kernel defaults,
// which are the same values on a stock kernel).
func ReadMachine(net string) results.Machine {
	m := results.Machine{GoVersion: runtime.Version(), Net: net}
	m.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	m.Allowed, _ = pin.Allowed()
	if f := readInts("/proc/sys/net/ipv4/ip_local_port_range"); len(f) == 2 {
		m.PortRange = [2]int{f[0], f[1]}
	}
	if f := readInts("/proc/sys/net/ipv4/tcp_tw_reuse"); len(f) == 1 {
		m.TwReuse = f[0]
	}
	if f := readInts("/proc/sys/net/ipv4/tcp_fin_timeout"); len(f) == 1 {
		m.FinTimeout = f[0]
	}
	if f := readInts("/proc/sys/net/ipv4/tcp_tw_reuse_delay"); len(f) == 1 {
		m.TwReuseDelayMs = f[0]
	}
	if f := readInts("/proc/sys/net/ipv4/tcp_timestamps"); len(f) == 1 {
		m.Timestamps = f[0]
	}
	if f := readInts("/proc/sys/net/ipv4/tcp_max_tw_buckets"); len(f) == 1 {
		m.MaxTwBuckets = f[0]
	}
	return m
}

func readInts(path string) []int {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}
