package proxy

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
)

// versionTimeout bounds a `proxy -v` style call.
const versionTimeout = 10 * time.Second

// commandVersion runs path with args and returns name + " " + the first
// submatch of re in its combined output.
func commandVersion(name, path string, re *regexp.Regexp, args ...string) (string, error) {
	// It runs as root: only a binary that passes the lab's rule.
	if err := findbin.Trusted(path); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = findbin.Environ("", nil)
	out, err := cmd.CombinedOutput()
	m := re.FindSubmatch(out)
	if m == nil {
		if err != nil {
			return "", fmt.Errorf("%s %s failed (%v): check that %s is a working %s binary", path, strings.Join(args, " "), err, path, name)
		}
		return "", fmt.Errorf("%s %s printed no version (%q): check that %s is a %s binary", path, strings.Join(args, " "), firstLine(out), path, name)
	}
	return name + " " + string(m[1]), nil
}

// goModuleVersion reads the version of module mod from a Go binary's build
// info: the main module's version or a dependency's (after replacement).
// It returns "" when the binary is not Go, has no such module, or was built
// from a checkout ("(devel)").
func goModuleVersion(path, mod string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	clean := func(v string) string {
		if v == "" || v == "(devel)" {
			return ""
		}
		return v
	}
	if bi.Main.Path == mod {
		return clean(bi.Main.Version)
	}
	for _, d := range bi.Deps {
		if d.Path != mod {
			continue
		}
		if d.Replace != nil {
			return clean(d.Replace.Version)
		}
		return clean(d.Version)
	}
	return ""
}

// trimV drops a leading "v" from a Go module version.
func trimV(v string) string { return strings.TrimPrefix(v, "v") }

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
