package netns

import (
	"context"
	"fmt"
	"github.com/loadlab/loadlab/internal/testutil"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

var needRoot = testutil.NeedRoot

// ipOutput returns `ip ARGS` output.
func ipOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %v: %v: %s", args, err, out)
	}
	return string(out)
}

// newTestLab makes a lab that is closed when the test ends, and checks
// then that nothing of it is left.
func newTestLab(t *testing.T, roles []string, extra int) *Lab {
	t.Helper()
	return newTestLabPrefix(t, "ll", roles, extra)
}

// newTestLabPrefix is newTestLab with the lab's name prefix.
func newTestLabPrefix(t *testing.T, prefix string, roles []string, extra int) *Lab {
	t.Helper()
	needRoot(t)
	l, err := NewLab(prefix, roles, extra)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{l.bridge}
	for _, s := range l.spaces {
		names = append(names, s.name, s.veth)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		all := ipOutput(t, "netns", "list") + ipOutput(t, "link")
		for _, n := range names {
			if strings.Contains(all, n) {
				t.Errorf("%s still exists after Close", n)
			}
		}
	})
	return l
}

// serve accepts on ln; each connection gets "hi <remote ip>\n", then the
// server waits for the client to close first (so TIME_WAIT lands on the
// client side) and closes too.
func serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			ra := c.RemoteAddr().(*net.TCPAddr)
			fmt.Fprintf(c, "hi %s\n", ra.IP)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.Copy(io.Discard, c)
		}()
	}
}

func TestLabTraffic(t *testing.T) {
	l := newTestLab(t, []string{"backend", "proxy", "gen"}, 2)
	be, px, gen := l.Addr("backend"), l.Addr("proxy"), l.Addr("gen")
	if !Subnet.Contains(be) || be == px || px == gen || be == gen {
		t.Fatalf("addresses backend %v proxy %v gen %v", be, px, gen)
	}
	ga := l.GenAddrs()
	if len(ga) != 3 || ga[0] != gen {
		t.Fatalf("GenAddrs = %v, want gen's address and 2 more", ga)
	}
	if l.Addr("nope").IsValid() || l.NSPath("nope") != "" {
		t.Error("unknown role has an address or path")
	}
	if !strings.Contains(ipOutput(t, "netns", "list"), strings.TrimPrefix(l.NSPath("gen"), runDir+"/")) {
		t.Error("gen namespace not listed by ip netns list")
	}
	// The namespaces keep the kernel's default port range.
	err := l.Do("gen", func() error {
		b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
		if err != nil {
			return err
		}
		if got := strings.Join(strings.Fields(string(b)), "-"); got != "32768-60999" {
			return fmt.Errorf("port range in gen = %s", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	const port = 18099
	ln, err := l.Listen("backend", "tcp", netip.AddrPortFrom(be, port).String())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go serve(ln)

	// The lab's addresses exist only inside it: the host has none of them
	// (checked without sending anything, since a host route would leave
	// the machine).
	hostAddrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range hostAddrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok && Subnet.Contains(ip) {
			t.Errorf("host has lab address %v on link %d", a.IPNet, a.LinkIndex)
		}
	}

	const conns = 5
	for i := 0; i < conns; i++ {
		src := ga[i%len(ga)]
		d := &net.Dialer{Timeout: 3 * time.Second, LocalAddr: &net.TCPAddr{IP: src.AsSlice()}}
		c, err := l.DialContext("gen", d)(context.Background(), "tcp", netip.AddrPortFrom(be, port).String())
		if err != nil {
			t.Fatalf("dial from gen (%s): %v", src, err)
		}
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(buf[:n]), "hi "+src.String()+"\n"; got != want {
			t.Errorf("server said %q, want %q", got, want)
		}
		c.Close() // the client closes first: TIME_WAIT in gen
	}
	var tw int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if tw, err = l.TimeWait("gen"); err != nil {
			t.Fatal(err)
		}
		if tw == conns {
			break
		}
	}
	if tw != conns {
		t.Errorf("TIME_WAIT in gen = %d, want %d", tw, conns)
	}
	if n, err := l.TimeWait("backend"); err != nil || n != 0 {
		t.Errorf("TIME_WAIT in backend = %d, %v; want 0 (it closed second)", n, err)
	}
	if n, err := HostTimeWait(port); err != nil || n != 0 {
		t.Errorf("host TIME_WAIT on port %d = %d, %v; want 0 (lab traffic stays in the lab)", port, n, err)
	}
}

func TestLabCloseTwiceAndAfter(t *testing.T) {
	l := newTestLab(t, []string{"gen"}, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := l.Do("gen", func() error { return nil }); err == nil {
		t.Error("Do after Close succeeded")
	}
	if _, err := l.TimeWait("gen"); err == nil {
		t.Error("TimeWait after Close succeeded")
	}
}

func TestNewLabRejects(t *testing.T) {
	cases := []struct {
		prefix string
		roles  []string
		extra  int
	}{
		{"LL", []string{"gen"}, 0},
		{"toolong", []string{"gen"}, 0},
		{"ll", nil, 0},
		{"ll", []string{"gen", "gen"}, 0},
		{"ll", []string{"Gen"}, 0},
		{"ll", []string{"backend"}, 2}, // extras need a gen role
		{"ll", []string{"gen"}, 500},
		{"ll", strings.Fields("a b c d e f g h i j"), 0},
	}
	for _, c := range cases {
		if l, err := NewLab(c.prefix, c.roles, c.extra); err == nil {
			l.Close()
			t.Errorf("NewLab(%q, %v, %d) accepted", c.prefix, c.roles, c.extra)
		}
	}
}

func TestRemoveStale(t *testing.T) {
	// The test's own prefix: a lab run's session (lab/session's tests, run
	// beside this package) sweeps dead runs' "ll" objects too, and would
	// take the ones planted here.
	const prefix = "lln"
	live := newTestLabPrefix(t, prefix, []string{"gen"}, 0)
	dead := deadPid(t)
	// What a crashed run with pid `dead` leaves: a namespace, a bridge and
	// a veth.
	nsName := fmt.Sprintf("%s%d-0-gen", prefix, dead)
	h, err := createNamed(nsName)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("%sbr%d-0", prefix, dead)}}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: fmt.Sprintf("%s%d-0v0", prefix, dead)}, PeerName: fmt.Sprintf("%sp%d", prefix, dead)}
	for _, link := range []netlink.Link{br, veth} {
		if err := netlink.LinkAdd(link); err != nil {
			t.Fatal(err)
		}
	}
	leftovers := []string{nsName, veth.Name, br.Name} // the order RemoveStale deletes in
	t.Cleanup(func() {
		_ = deleteNamed(nsName)
		_ = delLink(br.Name)
		_ = delLink(veth.Name)
	})
	found, err := FindStale(prefix)
	if got := strings.Join(found, " "); err != nil || got != strings.Join(leftovers, " ") {
		t.Errorf("found %q (%v), want %q", got, err, strings.Join(leftovers, " "))
	}
	listed := ipOutput(t, "netns", "list") + ipOutput(t, "link")
	for _, n := range leftovers {
		if !strings.Contains(listed, n) {
			t.Errorf("%s deleted by the listing", n)
		}
	}
	removed, err := RemoveStale(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(removed, " "); got != strings.Join(leftovers, " ") {
		t.Errorf("removed %q, want %q", got, strings.Join(leftovers, " "))
	}
	all := ipOutput(t, "netns", "list") + ipOutput(t, "link")
	for _, n := range leftovers {
		if strings.Contains(all, n) {
			t.Errorf("%s still exists", n)
		}
	}
	if !strings.Contains(all, live.Bridge()) || live.Do("gen", func() error { return nil }) != nil {
		t.Error("RemoveStale touched a live lab")
	}
}

var deadPid = testutil.DeadPID
