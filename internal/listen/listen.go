// Package listen binds the listeners loadlab serves on (the metrics
// endpoint, the live report page): loopback unless the caller allows
// more, bound at once so that an address in use is an error before any
// work starts. It imports nothing of loadlab.
package listen

import (
	"fmt"
	"net"
	"net/netip"
)

// Local binds a TCP listener on addr (HOST:PORT). A host that is not a
// loopback address (127.0.0.0/8, ::1, localhost) is refused unless
// allowRemote: what loadlab serves is meant for this machine.
func Local(addr, flag string, allowRemote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s %q: want HOST:PORT, such as 127.0.0.1:9464: %w", flag, addr, err)
	}
	if !allowRemote && !IsLoopback(host) {
		return nil, fmt.Errorf("%s %s is not a loopback address: serve on 127.0.0.1 or ::1, or add --allow-remote to serve it off this machine", flag, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w (pick a free port)", flag, addr, err)
	}
	return ln, nil
}

// IsLoopback reports whether host (an address or "localhost") is a
// loopback address. An empty host (all addresses) is not.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
