package run

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
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
