package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// fakeNS is a network namespace for checkOnMachine: its links by index,
// the route every target takes, and where its veths lead.
type fakeNS struct {
	links map[int]netlink.Link
	route netlink.Route
	peers map[int]fakePeer // by veth index
}

type fakePeer struct {
	ns    *fakeNS // nil: a namespace that cannot be seen
	index int
}

func (n *fakeNS) RouteGet(net.IP) ([]netlink.Route, error) { return []netlink.Route{n.route}, nil }
func (n *fakeNS) LinkByIndex(i int) (netlink.Link, error) {
	if l, ok := n.links[i]; ok {
		return l, nil
	}
	return nil, errors.New("no such link")
}
func (n *fakeNS) LinkList() ([]netlink.Link, error) {
	var out []netlink.Link
	for _, l := range n.links {
		out = append(out, l)
	}
	return out, nil
}
func (n *fakeNS) Peer(l netlink.Link) (netlink.Link, netView, error) {
	p, ok := n.peers[l.Attrs().Index]
	if !ok || p.ns == nil {
		return nil, nil, nil
	}
	return p.ns.links[p.index], p.ns, nil
}

func (n *fakeNS) add(l netlink.Link) netlink.Link {
	if n.links == nil {
		n.links, n.peers = map[int]netlink.Link{}, map[int]fakePeer{}
	}
	n.links[l.Attrs().Index] = l
	return l
}

func attrs(index int, name string, master int) netlink.LinkAttrs {
	return netlink.LinkAttrs{Index: index, Name: name, MasterIndex: master}
}

func bridge(index int, name string) netlink.Link {
	return &netlink.Bridge{LinkAttrs: attrs(index, name, 0)}
}
func veth(index int, name string, master int) netlink.Link {
	return &netlink.Veth{LinkAttrs: attrs(index, name, master)}
}
func nic(index int, name string, master int) netlink.Link {
	return &netlink.Device{LinkAttrs: attrs(index, name, master)}
}

// pair links veth a in x with veth b in y.
func pair(x *fakeNS, a int, y *fakeNS, b int) {
	x.peers[a] = fakePeer{y, b}
	y.peers[b] = fakePeer{x, a}
}

// The local-target check on injected namespaces: a bridge of veths into
// this host's namespaces is on this machine (as the lab lays it out); a
// bridge with a physical port, a veth whose other end sits on such a bridge
// (a container on a host whose NIC is bridged: LXD, libvirt, Proxmox), a
// physical link and a gateway are off it.
func TestCheckOnMachine(t *testing.T) {
	dst := netip.MustParseAddr("10.7.0.5")
	// The host: br0 with veths to the namespaces a and b; gen, a namespace
	// whose veth g0 has its other end on br0.
	layout := func(nicOnBridge bool) (host, gen, a *fakeNS) {
		host, gen, a, b := &fakeNS{}, &fakeNS{}, &fakeNS{}, &fakeNS{}
		host.add(bridge(10, "br0"))
		host.add(veth(11, "va", 10))
		host.add(veth(12, "vb", 10))
		host.add(veth(13, "vg", 10))
		a.add(veth(2, "eth0", 0))
		b.add(veth(2, "eth0", 0))
		gen.add(veth(2, "g0", 0))
		pair(host, 11, a, 2)
		pair(host, 12, b, 2)
		pair(host, 13, gen, 2)
		if nicOnBridge {
			host.add(nic(3, "enp1s0", 10))
		}
		host.route = netlink.Route{LinkIndex: 10}
		gen.route = netlink.Route{LinkIndex: 2}
		return host, gen, a
	}
	for _, tc := range []struct {
		name string
		view func() netView
		off  string // "" when accepted, else a word of the reason
	}{
		{"bridge of veths", func() netView { h, _, _ := layout(false); return h }, ""},
		{"veth to a bridge of veths", func() netView { _, g, _ := layout(false); return g }, ""},
		{"bridge with a physical port", func() netView { h, _, _ := layout(true); return h }, "enp1s0"},
		{"veth to a bridge with a physical port", func() netView { _, g, _ := layout(true); return g }, "enp1s0"},
		{"veth to a namespace not seen", func() netView {
			n := &fakeNS{}
			n.add(veth(2, "eth0", 0))
			n.peers[2] = fakePeer{}
			n.route = netlink.Route{LinkIndex: 2}
			return n
		}, ""},
		{"physical link", func() netView {
			n := &fakeNS{}
			n.add(nic(2, "enp1s0", 0))
			n.route = netlink.Route{LinkIndex: 2}
			return n
		}, "enp1s0"},
		{"gateway", func() netView {
			n := &fakeNS{}
			n.add(veth(2, "eth0", 0))
			n.route = netlink.Route{LinkIndex: 2, Gw: net.IPv4(10, 7, 0, 1)}
			return n
		}, "gateway"},
		{"this host's address", func() netView {
			n := &fakeNS{}
			n.add(nic(2, "enp1s0", 0))
			n.route = netlink.Route{LinkIndex: 2, Type: syscall.RTN_LOCAL}
			return n
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOnMachine(tc.view(), dst)
			switch {
			case tc.off == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.off != "" && err == nil:
				t.Fatal("accepted a target off this machine")
			case tc.off != "" && !strings.Contains(err.Error(), tc.off):
				t.Fatalf("refused with %q, want it to name %q", err, tc.off)
			}
		})
	}
}

// threadNS is a network namespace of its own for one locked OS thread:
// do runs f on that thread; the namespace goes when the test ends (the
// thread exits without being unlocked).
type threadNS struct {
	path string
	run  chan func()
}

func newThreadNS(t *testing.T) *threadNS {
	t.Helper()
	n := &threadNS{run: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread and its namespace end with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ready <- err
			return
		}
		n.path = fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		ready <- nil
		for f := range n.run {
			f()
		}
	}()
	if err := <-ready; err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() { close(n.run) })
	return n
}

// do runs f on the namespace's thread and fails the test on its error.
func (n *threadNS) do(t *testing.T, f func() error) {
	t.Helper()
	errc := make(chan error)
	n.run <- func() { errc <- f() }
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// The local-target check on real namespaces (root): the generator's
// namespace has a bridge whose port is a veth into a second namespace,
// which serves HTTP at 10.77.0.5: loaded. With a tap device enslaved to
// the bridge too (a VM's port, not a veth into this host's namespaces, as
// a physical NIC is not), the same target is refused before anything is
// sent. The old check accepted any bridge.
func TestLocalTargetBridgePorts(t *testing.T) {
	testutil.NeedRoot(t)
	gen, srv := newThreadNS(t), newThreadNS(t)
	var port int
	srv.do(t, func() error { return netlink.LinkSetUp(mustLink("lo")) })
	gen.do(t, func() error {
		for _, l := range []netlink.Link{
			&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}},
			&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "va"}, PeerName: "vb"},
		} {
			if err := netlink.LinkAdd(l); err != nil {
				return err
			}
		}
		br, va, vb := mustLink("br0"), mustLink("va"), mustLink("vb")
		f, err := os.Open(srv.path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := netlink.LinkSetNsFd(vb, int(f.Fd())); err != nil {
			return err
		}
		if err := netlink.LinkSetMaster(va, br); err != nil {
			return err
		}
		addr, _ := netlink.ParseAddr("10.77.0.1/24")
		if err := netlink.AddrAdd(br, addr); err != nil {
			return err
		}
		for _, l := range []netlink.Link{br, va, mustLink("lo")} {
			if err := netlink.LinkSetUp(l); err != nil {
				return err
			}
		}
		return nil
	})
	srv.do(t, func() error {
		vb := mustLink("vb")
		addr, _ := netlink.ParseAddr("10.77.0.5/24")
		if err := netlink.AddrAdd(vb, addr); err != nil {
			return err
		}
		if err := netlink.LinkSetUp(vb); err != nil {
			return err
		}
		ln, err := net.Listen("tcp4", "10.77.0.5:0")
		if err != nil {
			return err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close() })
		return nil
	})
	gen.do(t, func() error { // the veth's other end is found in the server's namespace
		v := newHostView()
		defer v.close()
		p, _, err := v.Peer(mustLink("va"))
		if err == nil && (p == nil || p.Attrs().Name != "vb") {
			err = fmt.Errorf("the other end of va: %v, want vb", p)
		}
		return err
	})
	cfg := Config{URL: fmt.Sprintf("http://10.77.0.5:%d/", port), NetNS: gen.path, Connections: 1,
		Duration: 500 * time.Millisecond, Timeout: 2 * time.Second}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.OK == 0 {
		t.Fatalf("a bridge of veths into this host's namespaces: %v (ok %v)", err, res != nil && res.OK > 0)
	}
	gen.do(t, func() error {
		if err := netlink.LinkAdd(&netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: "t0"}, Mode: netlink.TUNTAP_MODE_TAP}); err != nil {
			return err
		}
		return netlink.LinkSetMaster(mustLink("t0"), mustLink("br0"))
	})
	_, err = Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "t0") || !strings.Contains(err.Error(), "off this machine") {
		t.Fatalf("the bridge with t0 enslaved: %v, want a refusal naming t0", err)
	}
}

// mustLink is the link named name in the calling thread's namespace.
func mustLink(name string) netlink.Link {
	l, err := netlink.LinkByName(name)
	if err != nil {
		panic(err)
	}
	return l
}
