package lab

import (
	"slices"
	"strings"

	"github.com/loadlab/loadlab/lab/proxy"
)

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// profileNames turns a --profiles list into names: a name as given, a
// profile file loaded by load, which returns its name.
func profileNames(refs []string, load func(path string) (string, error)) ([]string, error) {
	var names []string
	for _, ref := range refs {
		if !proxy.IsFile(ref) {
			names = append(names, ref)
			continue
		}
		name, err := load(ref)
		if err != nil {
			return nil, usagef("--profiles: %v", err)
		}
		names = append(names, name)
	}
	return names, nil
}

// setBinaries applies --bin NAME=PATH to the profiles of set.
func setBinaries(set *proxy.Set, bins []string) error {
	for _, b := range bins {
		name, path, ok := strings.Cut(b, "=")
		if !ok || name == "" || path == "" {
			return usagef("--bin %q: give NAME=PATH, e.g. nginx-stock=/opt/nginx-1.28/sbin/nginx", b)
		}
		if err := set.SetBinary(name, path); err != nil {
			return usagef("--bin %s: %v", b, err)
		}
		p, _ := set.Get(name)
		if _, err := p.Find(); err != nil {
			return usagef("--bin %s: %v", b, err)
		}
	}
	return nil
}

// profileSet resolves a --profiles list (names and profile files; empty:
// every built-in) with --bin's binaries: the set of profiles the command
// may name and the ones it named, in order. An unknown name or a bad
// profile file is a UsageError.
func profileSet(list string, bins []string) (*proxy.Set, []proxy.Profile, error) {
	set := proxy.Builtins()
	refs := SplitList(list)
	names, err := profileNames(refs, func(path string) (string, error) {
		p, err := set.Load(path)
		return p.Name, err
	})
	if err != nil {
		return nil, nil, err
	}
	if err := setBinaries(set, bins); err != nil {
		return nil, nil, err
	}
	if len(refs) == 0 {
		return set, set.All(), nil
	}
	var out []proxy.Profile
	for _, name := range names {
		if slices.ContainsFunc(out, func(p proxy.Profile) bool { return p.Name == name }) {
			continue
		}
		p, err := set.Get(name)
		if err != nil {
			return nil, nil, usagef("--profiles: %v", err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, nil, usagef("--profiles is empty: give names such as nginx-stock,caddy-stock, or profile files")
	}
	return set, out, nil
}
