package plan

import (
	"embed"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the built-in plans: quick, seed-001, seed-2026, sumguy.
func BuiltinNames() []string {
	entries, _ := builtinFS.ReadDir("builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// BuiltinText returns the YAML of the built-in plan called name, comments
// included, as `loadlab lab plan show` prints it.
func BuiltinText(name string) ([]byte, bool) { return builtinText(name) }

func builtinText(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/.\\") {
		return nil, false
	}
	b, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	return b, err == nil
}
