package certs

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// DefaultNames are the SANs used when Options.Names is empty.
var DefaultNames = []string{"localhost", "127.0.0.1", "::1"}

// DefaultValidity is the leaf lifetime used when Options.Validity is zero.
const DefaultValidity = 365 * 24 * time.Hour

// renewMargin is how long before expiry a certificate is replaced.
const renewMargin = 24 * time.Hour

// Options say where and what to create.
type Options struct {
	Dir      string        // root directory: DIR/ca and DIR/<key>
	Keys     []KeyType     // leaf key types; empty means all
	Names    []string      // DNS names and IPs for the SANs; empty means DefaultNames
	Validity time.Duration // leaf lifetime; 0 means DefaultValidity

	now func() time.Time // clock for tests; nil means time.Now
}

// normalized is Options after defaults and checks.
type normalized struct {
	dir      string
	keys     []KeyType
	dns      []string
	ips      []net.IP
	validity time.Duration
	margin   time.Duration // renew this long before expiry
	now      time.Time
}

// normalize applies defaults and validates o.
func (o Options) normalize() (normalized, error) {
	n := normalized{dir: o.Dir, validity: o.Validity, now: time.Now()}
	if o.now != nil {
		n.now = o.now()
	}
	if strings.TrimSpace(o.Dir) == "" {
		return n, errors.New("no certificate directory given: set a directory such as ./certs")
	}
	if n.validity == 0 {
		n.validity = DefaultValidity
	}
	if n.validity < time.Hour {
		return n, fmt.Errorf("certificate validity %v is too short: use at least 1h", o.Validity)
	}
	n.margin = min(renewMargin, n.validity/2)
	n.keys = o.Keys
	if len(n.keys) == 0 {
		n.keys = AllKeyTypes()
	}
	seenKey := map[KeyType]bool{}
	var keys []KeyType
	for _, k := range n.keys {
		if !k.Valid() {
			return n, fmt.Errorf("unknown key type %q: use p256, rsa2048 or rsa4096", k)
		}
		if !seenKey[k] {
			seenKey[k] = true
			keys = append(keys, k)
		}
	}
	n.keys = keys
	names := o.Names
	if len(names) == 0 {
		names = DefaultNames
	}
	seen := map[string]bool{}
	for _, raw := range names {
		name := strings.ToLower(strings.TrimSpace(raw))
		if ip := net.ParseIP(strings.Trim(name, "[]")); ip != nil {
			if !seen[ip.String()] {
				seen[ip.String()] = true
				n.ips = append(n.ips, ip)
			}
			continue
		}
		if err := checkDNSName(name); err != nil {
			return n, err
		}
		if !seen[name] {
			seen[name] = true
			n.dns = append(n.dns, name)
		}
	}
	return n, nil
}

// checkDNSName accepts host names, with an optional "*." wildcard first label.
func checkDNSName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("certificate name %q is not a DNS name or IP address (%s)", name, why)
	}
	if name == "" {
		return bad("empty")
	}
	if len(name) > 253 {
		return bad("longer than 253 characters")
	}
	labels := strings.Split(strings.TrimPrefix(name, "*."), ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return bad("empty or over-long label")
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return bad(fmt.Sprintf("character %q", r))
			}
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return bad("label starts or ends with '-'")
		}
	}
	return nil
}

// Validate reports whether o would be accepted by Ensure, without touching
// the disk.
func (o Options) Validate() error {
	_, err := o.normalize()
	return err
}
