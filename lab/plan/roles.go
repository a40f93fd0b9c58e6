package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/lab/proxy"
)

// Scenario roles: what the server under test does (proxy.RoleProxy,
// proxy.RoleOrigin). A scenario runs on the plan's profiles of its role.
const (
	RoleProxy  = proxy.RoleProxy
	RoleOrigin = proxy.RoleOrigin
)

// Schemes of a scenario.
const (
	SchemeHTTPS = "https"
	SchemeHTTP  = "http"
)

// Sizes maps a scenario's size to the path requested: the backend's fixed
// bodies, which origins serve as files (proxy.FilePaths).
var Sizes = map[string]string{"1k": "/1k", "100k": "/100k", "1m": "/1m"}

// SizeNames lists the sizes in ascending order.
func SizeNames() []string { return []string{"1k", "100k", "1m"} }

// SizeOfPath is the size whose path is path ("" when none is).
func SizeOfPath(path string) string {
	for k, v := range Sizes {
		if v == path {
			return k
		}
	}
	return ""
}

// role is the scenario's role, RoleProxy when unset.
func (s *Scenario) role() string {
	if s.Role == "" {
		return RoleProxy
	}
	return s.Role
}

// IsOrigin reports whether the scenario measures servers serving files
// themselves.
func (s *Scenario) IsOrigin() bool { return s.role() == RoleOrigin }

// profileRole is the role of a profile name (RoleProxy for unknown names,
// which Validate reports).
func (p *Plan) profileRole(name string) string {
	if r := p.ProfileSet().RoleOf(name); r != "" {
		return r
	}
	return RoleProxy
}

// resolveTarget fills the scenario's scheme and role, and its path from
// its size; size and path both set is an error (before the kind's default
// path fills Path).
func (s *Scenario) resolveTarget() error {
	if s.Size != "" && s.Path != "" {
		return fmt.Errorf("size %s and path %s are both set: size picks the path (%s), so keep one", s.Size, s.Path, orQ(Sizes[s.Size]))
	}
	if s.Size != "" {
		s.Path = Sizes[s.Size] // "" for an unknown size: Validate names it
	}
	if s.Scheme == "" {
		s.Scheme = SchemeHTTPS
	}
	if s.Role == "" {
		s.Role = RoleProxy
	}
	return nil
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// validateTarget checks the scenario's size, scheme and role, and that its
// profiles are of its role; plan is the plan's profiles.
func (s *Scenario) validateTarget(p *Plan) error {
	plan := p.Profiles
	if s.Size != "" {
		if _, ok := Sizes[s.Size]; !ok {
			return fmt.Errorf("size %q: use one of %s", s.Size, strings.Join(SizeNames(), ", "))
		}
	}
	switch s.Scheme {
	case SchemeHTTPS:
	case SchemeHTTP:
		switch s.Kind {
		case KindHandshake, KindH3, KindKeepaliveH2:
			return fmt.Errorf("scheme http with kind %s: %s needs TLS; use scheme https, or kind %s over http", s.Kind, s.Kind, KindKeepalive)
		}
	default:
		return fmt.Errorf("scheme %q: use https or http", s.Scheme)
	}
	if !slices.Contains(proxy.Roles(), s.Role) {
		return fmt.Errorf("role %q: use %s (forwards to the backend) or %s (serves the lab's files itself)", s.Role, RoleProxy, RoleOrigin)
	}
	fit := func() string {
		var of []string
		for _, n := range plan {
			if p.profileRole(n) == s.Role {
				of = append(of, n)
			}
		}
		if len(of) == 0 {
			return fmt.Sprintf("the plan has no %s profile; add one of %s to its profiles", s.Role, strings.Join(p.ProfileSet().NamesOf(s.Role), ", "))
		}
		return fmt.Sprintf("the %s profiles of the plan are %s", s.Role, strings.Join(of, ", "))
	}
	for _, name := range s.Profiles {
		if r := p.profileRole(name); r != s.Role {
			hint := ""
			if s.Role == RoleProxy {
				hint = ", or set role: origin"
			}
			return fmt.Errorf("profile %s is %s %s, but this scenario's role is %s: %s%s", name, article(r), r, s.Role, fit(), hint)
		}
	}
	if len(s.Profiles) == 0 && !slices.ContainsFunc(plan, func(n string) bool { return p.profileRole(n) == s.Role }) {
		return fmt.Errorf("no profiles of role %s to run on: %s", s.Role, fit())
	}
	return nil
}

func article(role string) string {
	if role == RoleOrigin {
		return "an"
	}
	return "a"
}
