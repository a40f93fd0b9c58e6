package netns

import (
	"net"
	"net/netip"
)

// netipToNet converts a prefix with its host address kept (10.213.0.2/24)
// to the *net.IPNet netlink wants.
func netipToNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}
