package run

import (
	"net"
	"net/netip"
	"syscall"

	"github.com/vishvananda/netlink"
)

// CheckLocalTarget refuses targets off this machine unless AllowRemote.
// loadlab loads loopback, the host's own addresses, and addresses reached
// directly over a virtual link (veth or bridge: network namespaces such as
// the lab's, or local containers). A target behind a gateway or on a
// physical network is refused before anything is sent. Call it on a thread
// in the generator's namespace.
func CheckLocalTarget(cfg *Spec, dst netip.Addr) error {
	if cfg.AllowRemote || dst.IsLoopback() {
		return nil
	}
	routes, err := netlink.RouteGet(net.IP(dst.AsSlice()))
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
		link, err := netlink.LinkByIndex(r.LinkIndex)
		if err != nil {
			return usage("%s: cannot inspect the outgoing link (%v); set {AllowRemote} if the target is meant", dst, err)
		}
		switch link.Type() {
		case "veth", "bridge":
		default:
			return usage("%s is on the %s network of %s, not a virtual link of this machine: loadlab loads loopback and its own network namespaces; set {AllowRemote} to load it", dst, link.Type(), link.Attrs().Name)
		}
	}
	return nil
}
