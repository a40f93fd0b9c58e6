package run

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Target is a parsed request URL (gen.ParseTarget).
type Target struct {
	URL    string // as given
	Scheme string // "http" or "https"
	Host   string // host name or IP, without brackets or port
	Port   int
	Path   string // path and query, "/" at least
	// HostHeader is the Host header value: host, plus the port when it is
	// not the scheme's default.
	HostHeader string
}

// HostPort is host:port, the host in brackets when it is an IPv6 address.
func (t Target) HostPort() string {
	if strings.Contains(t.Host, ":") {
		return "[" + t.Host + "]:" + strconv.Itoa(t.Port)
	}
	return t.Host + ":" + strconv.Itoa(t.Port)
}

// Resolve returns the address to connect to: the IP in the URL, or the first
// address the resolver gives (IPv4 preferred).
func (t Target) Resolve(ctx context.Context) (netip.AddrPort, error) {
	if ip, err := netip.ParseAddr(t.Host); err == nil {
		return netip.AddrPortFrom(ip.Unmap(), uint16(t.Port)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", t.Host)
	if err != nil || len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("cannot resolve %s: %v", t.Host, err)
	}
	best := ips[0]
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			best = ip
			break
		}
	}
	return netip.AddrPortFrom(best.Unmap(), uint16(t.Port)), nil
}
