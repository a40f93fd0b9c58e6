package gen

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Target is a parsed request URL.
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

// ParseTarget parses and checks an http:// or https:// URL.
func ParseTarget(raw string) (Target, error) {
	if raw == "" {
		return Target{}, usage("missing URL: give one like http://127.0.0.1:8080/1k")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, usage("bad URL %q: %v", raw, unwrapURLError(err))
	}
	t := Target{URL: raw, Scheme: strings.ToLower(u.Scheme)}
	switch t.Scheme {
	case "http":
		t.Port = 80
	case "https":
		t.Port = 443
	case "":
		return Target{}, usage("URL %q has no scheme: use http://%s or https://%s", raw, raw, raw)
	default:
		return Target{}, usage("unsupported URL scheme %q in %q: use http:// or https://", u.Scheme, raw)
	}
	t.Host = u.Hostname()
	if t.Host == "" {
		return Target{}, usage("URL %q has no host", raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, usage("bad port %q in %q: use 1-65535", p, raw)
		}
		t.Port = n
	}
	if u.User != nil {
		return Target{}, usage("URL %q carries user info; send credentials in an Authorization header ({Headers}) instead", raw)
	}
	t.Path = u.EscapedPath()
	if t.Path == "" {
		t.Path = "/"
	}
	if u.RawQuery != "" {
		t.Path += "?" + u.RawQuery
	}
	t.HostHeader = u.Host
	if u.Port() != "" && ((t.Scheme == "http" && t.Port == 80) || (t.Scheme == "https" && t.Port == 443)) {
		t.HostHeader = strings.TrimSuffix(u.Host, ":"+u.Port())
	}
	return t, nil
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
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
