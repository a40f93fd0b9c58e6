package proxy

import (
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Set is the profiles a run may name: the built-ins and the profile files
// it was given, each name once.
type Set struct {
	list []Profile
}

// Builtins returns a new set holding the built-in profiles (embedded
// profile files), in a stable order (by server, then name).
func Builtins() *Set {
	return &Set{list: slices.Clone(builtins())}
}

// All returns the set's profiles: the built-ins first, then the files in
// the order they were loaded.
func (s *Set) All() []Profile {
	if s == nil {
		return builtins()
	}
	return slices.Clone(s.list)
}

// Names returns the names of the set's profiles, sorted.
func (s *Set) Names() []string {
	var names []string
	for _, p := range s.All() {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// Get returns the profile called name; the error lists the known profiles.
func (s *Set) Get(name string) (Profile, error) {
	for _, p := range s.All() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown proxy profile %q: use one of %s, or a profile file (./my-proxy.yaml)", name, strings.Join(s.Names(), ", "))
}

// NamesOf returns the names of the set's profiles of role, sorted.
func (s *Set) NamesOf(role string) []string {
	var names []string
	for _, p := range s.All() {
		if p.Role == role {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// RoleOf returns the role of the profile called name ("" if unknown).
func (s *Set) RoleOf(name string) string {
	if p, err := s.Get(name); err == nil {
		return p.Role
	}
	return ""
}

// Clone returns a copy of the set that can grow on its own.
func (s *Set) Clone() *Set { return &Set{list: s.All()} }

// add puts p into the set; a name already there is an error.
func (s *Set) add(p Profile) error {
	for _, have := range s.list {
		if have.Name != p.Name {
			continue
		}
		if have.Source.Builtin {
			return fmt.Errorf("name %s is a built-in profile's: give the copy a name of its own", p.Name)
		}
		return fmt.Errorf("name %s is already used by %s", p.Name, have.Source.File)
	}
	s.list = append(s.list, p)
	return nil
}

// SetBinary makes the profile called name run the binary at path (made
// absolute) in this set: `--bin NAME=PATH`.
func (s *Set) SetBinary(name, path string) error {
	i := slices.IndexFunc(s.list, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		_, err := s.Get(name)
		return err
	}
	abs, err := absPath(path)
	if err != nil {
		return err
	}
	s.list[i] = s.list[i].WithBinary(abs)
	return nil
}

// All returns the built-in profiles, in a stable order (by server, then
// name).
func All() []Profile { return builtins() }

// Names returns the names of the built-in profiles, sorted.
func Names() []string { return (*Set)(nil).Names() }

// Get returns the built-in profile called name; the error lists them.
func Get(name string) (Profile, error) { return (*Set)(nil).Get(name) }

// Parse checks the text of a profile file as Load does, named name in
// errors, and returns its profile without adding it to a set (extends
// names a built-in). The lab's own reference target (loadlab serve) is
// defined this way.
func Parse(name string, text []byte) (Profile, error) {
	return loadProfile(memSource{name, text}, name, nil, 0)
}

// Load reads the profile file at file, checks it (fields, templates, the
// parameters they use) and adds it to s. Its extends names a profile of s
// or another file, relative to this one. The error is one line that names
// the file, the line and the field.
func (s *Set) Load(file string) (Profile, error) {
	p, err := loadProfile(diskSource{}, file, s, 0)
	if err != nil {
		return Profile{}, err
	}
	if err := s.add(p); err != nil {
		return Profile{}, fmt.Errorf("%s:%d: %v", file, nameLine(p), err)
	}
	return p, nil
}

//go:embed builtin
var builtinFS embed.FS

var (
	builtinOnce sync.Once
	builtinList []Profile
)

// builtins parses the embedded profile files once, in a stable order (by
// server, then name). They are part of the binary and tested: an error is
// a bug, and panics.
func builtins() []Profile {
	builtinOnce.Do(func() {
		entries, err := builtinFS.ReadDir("builtin")
		if err != nil {
			panic(err)
		}
		s := &Set{}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".yaml") {
				continue
			}
			p, err := loadProfile(embedSource{builtinFS}, "builtin/"+e.Name(), s, 0)
			if err != nil {
				panic(fmt.Sprintf("built-in profile: %v", err))
			}
			if err := s.add(p); err != nil {
				panic(fmt.Sprintf("built-in profile %s: %v", p.Name, err))
			}
		}
		slices.SortStableFunc(s.list, func(a, b Profile) int {
			if a.Role != b.Role {
				if a.Role == RoleProxy {
					return -1
				}
				return 1
			}
			if c := strings.Compare(a.Proxy, b.Proxy); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		builtinList = s.list
	})
	return slices.Clone(builtinList)
}
