package netns

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Subnet is the private network inside every lab. It exists only on the
// lab's bridge and inside its namespaces (the host gets no address on it),
// so parallel labs can all use it.
var Subnet = netip.MustParsePrefix("10.213.0.0/24")

// Address plan: role i gets .1+i, the gen role's extra addresses start at .64.
const (
	firstRoleHost  = 1
	firstExtraHost = 64
	maxRoles       = 9
	maxExtra       = 254 - firstExtraHost + 1
)

// GenRole is the role whose interface carries the extra addresses.
const GenRole = "gen"

var (
	labSeq     atomic.Uint32
	prefixRe   = regexp.MustCompile(`^[a-z]{1,3}$`)
	roleNameRe = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)
)

// Lab is a bridge with one network namespace per role.
type Lab struct {
	prefix string
	bridge string
	spaces []*space

	mu     sync.Mutex
	closed bool
}

// space is one role's namespace.
type space struct {
	role   string
	name   string // namespace name under /var/run/netns
	veth   string // host end of the veth pair (the other end is eth0 inside)
	addrs  []netip.Addr
	handle netns.NsHandle

	diagMu   sync.Mutex
	sockstat *os.File // /proc/net/sockstat opened inside the namespace
}

// NewLab creates the bridge and one namespace per role, each with loopback
// up and eth0 on the bridge. prefix is 1-3 lowercase letters ("ll") that
// starts every name. extraGenAddrs more addresses go on the "gen" role's
// interface (for generators that spread source addresses). On error,
// whatever was made is removed.
func NewLab(prefix string, roles []string, extraGenAddrs int) (*Lab, error) {
	if !prefixRe.MatchString(prefix) {
		return nil, fmt.Errorf("bad lab prefix %q: use 1-3 lowercase letters, e.g. ll", prefix)
	}
	if len(roles) == 0 || len(roles) > maxRoles {
		return nil, fmt.Errorf("a lab needs 1 to %d roles, got %d", maxRoles, len(roles))
	}
	seen := map[string]bool{}
	for _, r := range roles {
		if !roleNameRe.MatchString(r) || seen[r] {
			return nil, fmt.Errorf("bad or repeated role name %q: use lowercase letters and digits", r)
		}
		seen[r] = true
	}
	if extraGenAddrs < 0 || extraGenAddrs > maxExtra {
		return nil, fmt.Errorf("extra gen addresses must be 0..%d, got %d", maxExtra, extraGenAddrs)
	}
	if extraGenAddrs > 0 && !seen[GenRole] {
		return nil, fmt.Errorf("extra source addresses need a role named %q", GenRole)
	}
	id := fmt.Sprintf("%d-%d", os.Getpid(), labSeq.Add(1)%100)
	l := &Lab{prefix: prefix, bridge: prefix + "br" + id}
	if err := l.build(id, roles, extraGenAddrs); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
}

// build creates the bridge, then per role a namespace, a veth pair with its
// inner end renamed eth0 and the addresses.
func (l *Lab) build(id string, roles []string, extra int) error {
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: l.bridge}}
	if err := netlink.LinkAdd(br); err != nil {
		return fmt.Errorf("cannot create bridge %s: %v; run as root", l.bridge, err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		return fmt.Errorf("cannot bring bridge %s up: %v", l.bridge, err)
	}
	base := Subnet.Addr().As4()
	for i, role := range roles {
		s := &space{role: role, name: fmt.Sprintf("%s%s-%s", l.prefix, id, role), veth: fmt.Sprintf("%s%sv%d", l.prefix, id, i)}
		ip := base
		ip[3] = byte(firstRoleHost + i)
		s.addrs = append(s.addrs, netip.AddrFrom4(ip))
		if role == GenRole {
			for k := 0; k < extra; k++ {
				ip[3] = byte(firstExtraHost + k)
				s.addrs = append(s.addrs, netip.AddrFrom4(ip))
			}
		}
		h, err := createNamed(s.name)
		if err != nil {
			return err
		}
		s.handle = h
		l.spaces = append(l.spaces, s)
		if err := l.plug(s, br); err != nil {
			return err
		}
	}
	return nil
}

// plug connects namespace s to the bridge and configures its interfaces.
func (l *Lab) plug(s *space, br *netlink.Bridge) error {
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: s.veth, MasterIndex: br.Index},
		PeerName:      "eth0",
		PeerNamespace: netlink.NsFd(int(s.handle)),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("cannot create veth %s for %s: %v", s.veth, s.role, err)
	}
	if err := netlink.LinkSetUp(veth); err != nil {
		return fmt.Errorf("cannot bring %s up: %v", s.veth, err)
	}
	h, err := netlink.NewHandleAt(s.handle)
	if err != nil {
		return fmt.Errorf("cannot open netlink in namespace %s: %v", s.name, err)
	}
	defer h.Close()
	for _, name := range []string{"lo", "eth0"} {
		link, err := h.LinkByName(name)
		if err != nil {
			return fmt.Errorf("namespace %s: %s: %v", s.name, name, err)
		}
		if name == "eth0" {
			for _, a := range s.addrs {
				addr := &netlink.Addr{IPNet: netipToNet(netip.PrefixFrom(a, Subnet.Bits()))}
				if err := h.AddrAdd(link, addr); err != nil {
					return fmt.Errorf("namespace %s: cannot add %s: %v", s.name, a, err)
				}
			}
		}
		if err := h.LinkSetUp(link); err != nil {
			return fmt.Errorf("namespace %s: cannot bring %s up: %v", s.name, name, err)
		}
	}
	return nil
}

func (l *Lab) space(role string) (*space, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("network lab already closed")
	}
	for _, s := range l.spaces {
		if s.role == role {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no role %q in this network lab", role)
}

// Addr is the role's (first) address; the zero Addr for an unknown role.
func (l *Lab) Addr(role string) netip.Addr {
	if s, err := l.space(role); err == nil {
		return s.addrs[0]
	}
	return netip.Addr{}
}

// GenAddrs lists every address on the gen role's interface, its main
// address first.
func (l *Lab) GenAddrs() []netip.Addr {
	if s, err := l.space(GenRole); err == nil {
		return append([]netip.Addr(nil), s.addrs...)
	}
	return nil
}

// NSPath is the role's namespace file (/var/run/netns/NAME), usable with
// setns(2), proc.Spec.NetNS and `ip netns exec NAME`; "" for an unknown role.
func (l *Lab) NSPath(role string) string {
	if s, err := l.space(role); err == nil {
		return filepath.Join(runDir, s.name)
	}
	return ""
}

// Bridge is the name of the lab's bridge.
func (l *Lab) Bridge() string { return l.bridge }

// Do runs fn on an OS thread locked inside the role's namespace; sockets fn
// creates stay in that namespace. Goroutines fn starts do not run there.
func (l *Lab) Do(role string, fn func() error) error {
	s, err := l.space(role)
	if err != nil {
		return err
	}
	return inNS(s.handle, fn)
}

// Close deletes the namespaces, veth pairs and bridge. It is idempotent;
// processes still inside a namespace keep it alive until they exit.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	for i := len(l.spaces) - 1; i >= 0; i-- {
		s := l.spaces[i]
		s.diagMu.Lock()
		if s.sockstat != nil {
			s.sockstat.Close()
			s.sockstat = nil
		}
		s.diagMu.Unlock()
		if err := delLink(s.veth); err != nil {
			errs = append(errs, err)
		}
		if s.handle.IsOpen() {
			s.handle.Close()
		}
		if err := deleteNamed(s.name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := delLink(l.bridge); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// delLink deletes a host link by name; a missing link is not an error.
func delLink(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("cannot look up link %s: %v", name, err)
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("cannot delete link %s: %v", name, err)
	}
	return nil
}
