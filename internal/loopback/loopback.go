// Package loopback decides whether an address loadlab is asked to listen
// on stays on this machine: the listeners it opens for people to look at
// (lab run --serve's live page, --metrics-addr) bind loopback unless the
// flag that allows remote listeners for them is given.
//
// Imports: a leaf of internal/ (helpers loadlab's packages share); it
// imports no other loadlab package.
package loopback

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// ErrRemote is wrapped by Check's error for an address off loopback.
var ErrRemote = errors.New("not a loopback address")

// Is reports whether host (a name or an IP, no port) is loopback:
// "localhost", 127.0.0.0/8 or ::1. An empty host (every interface) is not.
func Is(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Check refuses HOST:PORT unless its host is loopback or allowRemote;
// flag names the option in the message ("--serve"), allowFlag the one
// that allows a remote listener for it ("--allow-remote").
func Check(flag, allowFlag, hostport string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return fmt.Errorf("%s %q: %w (give HOST:PORT, e.g. 127.0.0.1:8080)", flag, hostport, err)
	}
	if allowRemote || Is(host) {
		return nil
	}
	what := host
	if what == "" {
		what = "every interface"
	}
	return fmt.Errorf("%s %s: %w (%s): use 127.0.0.1:PORT, or add %s to serve other machines", flag, hostport, ErrRemote, what, allowFlag)
}

// Listen checks hostport as Check does and binds a TCP listener on it.
func Listen(flag, allowFlag, hostport string, allowRemote bool) (net.Listener, error) {
	if err := Check(flag, allowFlag, hostport, allowRemote); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: choose another port (or 0 for any free one) or stop what holds it", flag, hostport, err)
	}
	return ln, nil
}
