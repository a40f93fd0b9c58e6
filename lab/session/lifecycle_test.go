package session

import (
	"context"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"golang.org/x/sys/unix"
)

// Close stops the proxies and the backend by PID, removes the run's
// cgroups (loadlab-<pid>) and network namespaces, and later calls fail
// cleanly.
func TestCloseRemovesEverything(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	e := openSession(t, Options{Net: NetNS})
	on, dirs := e.Cgroups()
	if !on || len(dirs) == 0 {
		t.Fatalf("Cgroups() = %v %v, want cgroup run directories", on, dirs)
	}
	for _, d := range dirs {
		if !strings.HasSuffix(d, "/loadlab-"+strconv.Itoa(os.Getpid())) {
			t.Errorf("cgroup run directory %s is not loadlab-<our pid>", d)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "nginx-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := p.Group().Pids()
	if err != nil || len(pids) < 2 {
		t.Fatalf("nginx group pids %v (%v), want master and workers", pids, err)
	}
	pids = append(pids, e.BackendPID())
	nsFiles := []string{e.NSPath(RoleBackend), e.NSPath(RoleProxy), e.NSPath(RoleGen)}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d alive after Close", pid)
		}
	}
	for _, d := range append(dirs, nsFiles...) {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s still exists after Close", d)
		}
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.StartProxy(ctx, "nginx-stock", certs.P256); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("StartProxy after Close: %v", err)
	}
}

// Without cgroups the proxy is still pinned to the server CPUs by
// affinity, watched through /proc, and stopped with its whole process
// group.
func TestNoCgroups(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	e := openSession(t, Options{NoCgroups: true})
	if on, dirs := e.Cgroups(); on || dirs != nil {
		t.Fatalf("Cgroups() = %v %v with NoCgroups", on, dirs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "nginx-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.CheckBodies(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := p.Stats()
	if err != nil || st.Procs < 2 || st.MemCurrent == 0 {
		t.Errorf("process-tree stats %+v, %v; want master and workers with memory", st, err)
	}
	pids, _ := p.Group().Pids()
	for _, pid := range pids {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &set); err != nil {
			continue
		}
		ok := set.Count() == len(e.Plan().Server)
		for _, cpu := range e.Plan().Server {
			ok = ok && set.IsSet(cpu)
		}
		if !ok {
			t.Errorf("pid %d affinity has %d CPUs, want exactly %s", pid, set.Count(), e.Plan().Server)
		}
	}
	idle, err := p.IdleMemory(ctx, 100*time.Millisecond, 2, 100*time.Millisecond)
	if err != nil || idle.Need == 0 || idle.Total == 0 {
		t.Errorf("idle memory without cgroups %+v, %v", idle, err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d alive after Stop", pid)
		}
	}
}

// StartProxy refuses unknown profiles (listing the known ones) and key
// types the lab did not prepare, before starting anything.
func TestStartProxyErrors(t *testing.T) {
	realLab(t)
	e := openSession(t, Options{})
	ctx := context.Background()
	if _, err := e.StartProxy(ctx, "envoy", certs.P256); err == nil || !strings.Contains(err.Error(), "nginx-stock") {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := e.StartProxy(ctx, "nginx-stock", certs.RSA4096); err == nil || !strings.Contains(err.Error(), "Options.Keys") {
		t.Errorf("unprepared key: %v", err)
	}
}

// A port taken between picking and the proxy's bind makes the proxy exit
// at start; StartProxy tries again with other ports.
func TestStartProxyRetriesTakenPort(t *testing.T) {
	realLab(t)
	installedProfile(t, "h2o")
	e := openSession(t, Options{})
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	busy := held.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPorts = func(listen func(string, string) (net.Listener, error), listenPacket func(string, string) (net.PacketConn, error), host netip.Addr, n int, udp bool) ([]int, error) {
		calls++
		ports, err := freePorts(listen, listenPacket, host, n, udp)
		if calls == 1 && err == nil {
			ports[len(ports)-1] = busy // the HTTPS port, taken
		}
		return ports, err
	}
	defer func() { pickPorts = freePorts }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "h2o", certs.P256)
	if err != nil {
		t.Fatalf("StartProxy with the first HTTPS port taken: %v", err)
	}
	if calls != 2 || p.Params().HTTPSPort == busy {
		t.Errorf("%d port picks, HTTPS port %d (busy %d); want a second pick and another port", calls, p.Params().HTTPSPort, busy)
	}
	if _, err := p.CheckBodies(ctx); err != nil {
		t.Error(err)
	}
}
