package gen

import (
	"net/netip"
	"strings"
)

// parseSrcAddrs parses Config.SrcAddrs (--src-addrs): a comma list of
// addresses and ranges ("10.0.0.2,10.0.0.5-10.0.0.9"), or "auto", which
// for a loopback target means 127.0.0.2-127.0.0.250 (every 127/8 address
// is local on Linux).
func parseSrcAddrs(s string, target Target) ([]netip.Addr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if s == "auto" {
		ip, err := netip.ParseAddr(target.Host)
		if target.Host == "localhost" || (err == nil && ip.Is4() && ip.IsLoopback()) {
			return parseSrcAddrs("127.0.0.2-127.0.0.250", target)
		}
		return nil, fieldErr("SrcAddrs", "auto works for 127.0.0.0/8 targets; list the local addresses to use instead")
	}
	var out []netip.Addr
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := netip.ParseAddr(strings.TrimSpace(lo))
		if err != nil {
			return nil, fieldErr("SrcAddrs", "bad entry %q: use addresses or ranges like 10.0.0.2-10.0.0.9", part)
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		b, err := netip.ParseAddr(strings.TrimSpace(hi))
		if err != nil || b.Is4() != a.Is4() || b.Less(a) {
			return nil, fieldErr("SrcAddrs", "bad range %q: use low-high of one family", part)
		}
		for x := a; ; x = x.Next() {
			out = append(out, x)
			if x == b || len(out) > 65536 {
				break
			}
		}
	}
	if len(out) > 65536 {
		return nil, fieldErr("SrcAddrs", "lists more than 65536 addresses")
	}
	return out, nil
}
