package plan

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/loadlab/loadlab/lab/proxy"
)

// ProfileSet returns the profiles the plan may name: the built-ins, and
// the profile files its profiles list or the command line named.
func (p *Plan) ProfileSet() *proxy.Set {
	if p.profiles == nil {
		p.profiles = proxy.Builtins()
	}
	return p.profiles
}

// ProfilesOf lists the plan's profiles of role, in plan order.
func (p *Plan) ProfilesOf(role string) []string {
	var out []string
	for _, n := range p.Profiles {
		if p.profileRole(n) == role {
			out = append(out, n)
		}
	}
	return out
}

// loadProfileFiles loads the profile files the plan's profiles list names
// (paths relative to dir, the plan's directory) and puts their names in
// their place; scenarios name them by name.
func (p *Plan) loadProfileFiles(dir string) error {
	for i, ref := range p.Profiles {
		if !proxy.IsFile(ref) {
			continue
		}
		path := ref
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, ref)
		}
		prof, err := p.ProfileSet().Load(path)
		if err != nil {
			return fmt.Errorf("profiles[%d]: %v", i, err)
		}
		p.Profiles[i] = prof.Name
		if p.files == nil {
			p.files = map[string]string{}
		}
		p.files[prof.Name] = ref
	}
	return nil
}

// AddProfileFile loads the profile file at path (relative to the working
// directory) for `--profiles ./my.yaml`, adds it to the plan's profiles
// and to every scenario of its role that lists its own, and returns its
// name: a profile named on the command line runs wherever a profile of its
// role does. A file the plan lists already is not loaded twice.
func (p *Plan) AddProfileFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for _, prof := range p.ProfileSet().All() {
		if f := prof.Source.File; f != "" {
			if fa, err := filepath.Abs(f); err == nil && fa == abs {
				return prof.Name, nil
			}
		}
	}
	prof, err := p.ProfileSet().Load(path)
	if err != nil {
		return "", err
	}
	if !slices.Contains(p.Profiles, prof.Name) {
		p.Profiles = append(p.Profiles, prof.Name)
	}
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		if len(s.Profiles) > 0 && s.role() == prof.Role && !slices.Contains(s.Profiles, prof.Name) {
			s.Profiles = append(s.Profiles, prof.Name)
		}
	}
	return prof.Name, nil
}

// SetBinary makes the plan's profile name run the binary at path: `--bin
// NAME=PATH` for one run.
func (p *Plan) SetBinary(name, path string) error {
	return p.ProfileSet().SetBinary(name, path)
}
