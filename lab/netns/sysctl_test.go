package netns

import (
	"os"
	"strings"
	"testing"
)

func TestCheckSysctl(t *testing.T) {
	for _, k := range []string{"net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_max_tw_buckets", "net.ipv4.ip_local_port_range", "net.core.somaxconn"} {
		if err := CheckSysctl(k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	for k, want := range map[string]string{
		"net.core.rmem_max":       "net.core.rmem_max is not one",
		"vm.swappiness":           "vm.swappiness is not one",
		"kernel.pid_max":          "kernel.pid_max is not one",
		"net.ipv4.no_such_knob":   "net.ipv4.no_such_knob does not exist",
		"net.ipv4.../../x":        "not a sysctl name",
		"net/ipv4/tcp_tw_reuse":   "not a sysctl name",
		"":                        "not a sysctl name",
		"net.ipv4.tcp_tw_reuse\n": "not a sysctl name",
	} {
		if err := CheckSysctl(k); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", k, err, want)
		}
	}
}

func TestParseNetstat(t *testing.T) {
	text := "TcpExt: SyncookiesSent TW TWRecycled ListenOverflows ListenDrops TCPTimeWaitOverflow\nTcpExt: 0 17 3 2 2 642445\nIpExt: InNoRoutes\nIpExt: 0\n"
	m, err := ParseNetstat([]byte(text), "TcpExt")
	if err != nil {
		t.Fatal(err)
	}
	if m["TW"] != 17 || m["TWRecycled"] != 3 || m["ListenOverflows"] != 2 || m["TCPTimeWaitOverflow"] != 642445 {
		t.Fatalf("%v", m)
	}
	if _, err := ParseNetstat([]byte("TcpExt: A B\nTcpExt: 1\n"), "TcpExt"); err == nil {
		t.Fatal("short value line accepted")
	}
	if _, err := ParseNetstat([]byte("IpExt: A\nIpExt: 1\n"), "TcpExt"); err == nil {
		t.Fatal("missing group accepted")
	}
}

// A sysctl set in a role's namespace reads back there and leaves the host
// and the other namespaces alone; TcpExt reads the namespace's counters.
func TestSysctlInNamespace(t *testing.T) {
	l := newTestLab(t, []string{"proxy", "backend"}, 0)
	host, err := os.ReadFile("/proc/sys/net/ipv4/tcp_max_tw_buckets")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetSysctl("proxy", "net.ipv4.tcp_max_tw_buckets", "8192"); err != nil {
		t.Fatal(err)
	}
	if err := l.SetSysctl("proxy", "net.ipv4.ip_local_port_range", "40000 40999"); err != nil {
		t.Fatal(err)
	}
	if v, err := l.Sysctl("proxy", "net.ipv4.tcp_max_tw_buckets"); err != nil || v != "8192" {
		t.Fatalf("read back %q %v", v, err)
	}
	if v, err := l.Sysctl("proxy", "net.ipv4.ip_local_port_range"); err != nil || v != "40000 40999" {
		t.Fatalf("read back %q %v", v, err)
	}
	if v, err := l.Sysctl("backend", "net.ipv4.ip_local_port_range"); err != nil || v == "40000 40999" {
		t.Fatalf("backend namespace %q %v: changed with the proxy's", v, err)
	}
	if now, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_max_tw_buckets"); string(now) != string(host) {
		t.Fatalf("host tcp_max_tw_buckets changed: %q -> %q", host, now)
	}
	if err := l.SetSysctl("proxy", "vm.swappiness", "1"); err == nil {
		t.Fatal("non-namespaced key set")
	}
	if err := l.SetSysctl("proxy", "net.ipv4.tcp_tw_reuse", "7"); err == nil || !strings.Contains(err.Error(), "net.ipv4.tcp_tw_reuse") {
		t.Fatalf("out-of-range value: %v", err)
	}
	m, err := l.TCPExt("proxy")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"TCPTimeWaitOverflow", "TW", "TWRecycled", "ListenOverflows", "ListenDrops"} {
		if _, ok := m[k]; !ok {
			t.Errorf("TcpExt has no %s", k)
		}
	}
}
