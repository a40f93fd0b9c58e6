package gen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// checkLocalTarget refuses targets off this machine unless AllowRemote.
// Call it on a thread in the generator's namespace.
func checkLocalTarget(cfg *Prepared, dst netip.Addr) error {
	if cfg.AllowRemote || dst.IsLoopback() {
		return nil
	}
	v := newHostView()
	defer v.close()
	return checkOnMachine(v, dst)
}

// netView is what checkOnMachine looks at in one network namespace: its
// routes and links, and the namespaces its veths lead to (netlink in the
// real ones; tests inject theirs).
type netView interface {
	RouteGet(dst net.IP) ([]netlink.Route, error)
	LinkByIndex(index int) (netlink.Link, error)
	LinkList() ([]netlink.Link, error)
	// Peer returns the other end of veth and the view of its namespace,
	// or a nil link when that namespace cannot be seen from here (its
	// other end is then still a namespace of this host: veths do not
	// leave the host).
	Peer(veth netlink.Link) (netlink.Link, netView, error)
}

// maxHops bounds how many veth-bridge hops checkOnMachine follows from the
// target's link: the lab's layouts take two.
const maxHops = 6

// checkOnMachine refuses dst unless it is on this machine: an address of
// this host, or reached without a gateway over a veth or a bridge whose
// every way out leads to network namespaces of this host (veths, and
// through them further bridges of veths). A bridge with any other port (a
// physical NIC, a tap of a VM, a tunnel) is off-machine: on a host whose NIC
// is enslaved to a bridge (libvirt, Proxmox, LXD), every host on the LAN
// would otherwise count as local. A target behind a gateway or on a
// physical network is refused before anything is sent.
func checkOnMachine(v netView, dst netip.Addr) error {
	routes, err := v.RouteGet(net.IP(dst.AsSlice()))
	if err != nil || len(routes) == 0 {
		return usage("no route to %s (%v): loadlab loads loopback and its own network namespaces unless {AllowRemote}", dst, err)
	}
	for _, r := range routes {
		if r.Type == syscall.RTN_LOCAL {
			return nil // an address of this host
		}
	}
	for _, r := range routes {
		if r.Gw != nil {
			return usage("%s is reached through the gateway %s, off this machine: set {AllowRemote} to load a remote target", dst, r.Gw)
		}
		link, err := v.LinkByIndex(r.LinkIndex)
		if err != nil {
			return usage("%s: cannot inspect the outgoing link (%v); set {AllowRemote} if the target is meant", dst, err)
		}
		if why := offMachine(v, link, 0, maxHops); why != "" {
			return usage("%s is off this machine: %s; loadlab loads loopback, this host's addresses and its network namespaces: set {AllowRemote} to load it", dst, why)
		}
	}
	return nil
}

// offMachine says why link (in v) may lead off this machine, or "" when
// every way out of it ends in a namespace of this host. from is the index
// of the bridge port that led here (not followed back), hops how many
// more veth-bridge hops may be followed.
func offMachine(v netView, link netlink.Link, from, hops int) string {
	a := link.Attrs()
	switch link.Type() {
	case "veth":
		if hops == 0 {
			return fmt.Sprintf("veth %s leads through more than %d bridges", a.Name, maxHops)
		}
		peer, pv, err := v.Peer(link)
		if err != nil {
			return fmt.Sprintf("cannot inspect the other end of veth %s (%v)", a.Name, err)
		}
		if peer == nil || peer.Attrs().MasterIndex == 0 {
			return "" // a namespace of this host
		}
		master, err := pv.LinkByIndex(peer.Attrs().MasterIndex)
		if err != nil {
			return fmt.Sprintf("cannot inspect the bridge of veth %s's other end (%v)", a.Name, err)
		}
		return portsOff(pv, master, peer.Attrs().Index, hops-1)
	case "bridge":
		return portsOff(v, link, from, hops)
	}
	return fmt.Sprintf("its link %s is a %s, not a veth or bridge of this machine", a.Name, link.Type())
}

// portsOff is offMachine for bridge: each of its ports but from.
func portsOff(v netView, bridge netlink.Link, from, hops int) string {
	b := bridge.Attrs()
	if bridge.Type() != "bridge" {
		return fmt.Sprintf("a veth's other end is enslaved to %s, a %s, not a bridge", b.Name, bridge.Type())
	}
	links, err := v.LinkList()
	if err != nil {
		return fmt.Sprintf("cannot list the ports of bridge %s (%v)", b.Name, err)
	}
	for _, p := range links {
		pa := p.Attrs()
		if pa.MasterIndex != b.Index || pa.Index == from {
			continue
		}
		if p.Type() != "veth" {
			return fmt.Sprintf("bridge %s has %s (a %s, not a veth into this host's namespaces) among its ports", b.Name, pa.Name, p.Type())
		}
		if why := offMachine(v, p, 0, hops); why != "" {
			return why
		}
	}
	return ""
}

// hostView is netView on netlink, in the calling thread's namespace
// (views of other namespaces hold their own netlink sockets there).
type hostView struct {
	*netlink.Handle
	others map[int]*hostView // by netnsid as seen from this namespace (nil: not found)
	opened *[]*hostView      // every other namespace's view, to close
}

func newHostView() *hostView {
	return &hostView{Handle: new(netlink.Handle), others: map[int]*hostView{}, opened: new([]*hostView)}
}

// close releases the netlink sockets of the other namespaces' views.
func (v *hostView) close() {
	for _, o := range *v.opened {
		o.Close()
	}
}

// Peer finds the other end of veth: in the same namespace, or in the
// namespace with its netnsid, found among the named namespaces and those
// of the host's processes.
func (v *hostView) Peer(veth netlink.Link) (netlink.Link, netView, error) {
	a := veth.Attrs()
	if a.ParentIndex == 0 {
		return nil, nil, nil
	}
	pv := v
	if a.NetNsID >= 0 {
		pv = v.namespace(a.NetNsID)
		if pv == nil {
			return nil, nil, nil
		}
	}
	peer, err := pv.LinkByIndex(a.ParentIndex)
	if err != nil {
		var lnf netlink.LinkNotFoundError
		if errors.As(err, &lnf) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return peer, pv, nil
}

// namespace returns the view of the namespace with netnsid id (as seen
// from v's), or nil when no namespace this process can open has it: the
// named ones, the host's processes', then their threads'.
func (v *hostView) namespace(id int) *hostView {
	if o, ok := v.others[id]; ok {
		return o
	}
	v.others[id] = nil
	seen := map[uint64]bool{}
	for _, pattern := range []string{"/run/netns/*", "/proc/[0-9]*/ns/net", "/proc/[0-9]*/task/[0-9]*/ns/net"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			if o := v.open(p, id, seen); o != nil {
				v.others[id] = o
				return o
			}
		}
	}
	return nil
}

// open returns the view of the namespace at path if its netnsid (as seen
// from v's) is id; seen skips namespaces already tried.
func (v *hostView) open(path string, id int, seen map[uint64]bool) *hostView {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil || seen[st.Ino] {
		return nil
	}
	seen[st.Ino] = true
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if got, err := v.GetNetNsIdByFd(int(f.Fd())); err != nil || got != id {
		return nil
	}
	h, err := netlink.NewHandleAt(netns.NsHandle(f.Fd()))
	if err != nil {
		return nil
	}
	o := &hostView{Handle: h, others: map[int]*hostView{}, opened: v.opened}
	*v.opened = append(*v.opened, o)
	return o
}
