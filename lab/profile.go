package lab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/loadlab/loadlab/lab/proxy"
)

// showProfile finds the profile of `lab profile show`: a built-in's name or
// a profile file.
func showProfile(ref string) (proxy.Profile, error) {
	set := proxy.Builtins()
	if proxy.IsFile(ref) {
		p, err := set.Load(ref)
		if err != nil {
			return proxy.Profile{}, UsageError{err}
		}
		return p, nil
	}
	p, err := set.Get(ref)
	if err != nil {
		return proxy.Profile{}, UsageError{err}
	}
	return p, nil
}

// ShowProfile returns a profile file and its templates as `loadlab lab
// profile show NAME` prints them: each file under a "==> NAME <==" line,
// the profile file first. A built-in is shown as shipped.
func ShowProfile(ref string) ([]byte, error) {
	p, err := showProfile(ref)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "==> %s <==\n", yamlName(p))
	b.Write(p.Source.Text)
	for _, t := range p.Templates() {
		fmt.Fprintf(&b, "\n==> %s <== (rendered as %s)\n", filepath.Base(t.Source), t.Name)
		b.Write(t.Text)
	}
	return b.Bytes(), nil
}

// yamlName is the file name a profile's copy takes.
func yamlName(p proxy.Profile) string {
	if p.Source.File != "" {
		return filepath.Base(p.Source.File)
	}
	return p.Name + ".yaml"
}

// Top-level fields of a profile file that a copy rewrites.
var (
	nameLineRe = regexp.MustCompile(`(?m)^name:.*$`)
	descLineRe = regexp.MustCompile(`(?m)^description:.*$`)
)

// CopyProfile writes a profile file and its templates into dir (created
// 0755), ready to edit and run beside the original: the copy is named
// newName (default NAME-copy), its description says what it copies, and
// its files entries name the templates written beside it. It returns the
// profile file's path. Files already in dir are not overwritten.
func CopyProfile(ref, dir, newName string) (string, error) {
	p, err := showProfile(ref)
	if err != nil {
		return "", err
	}
	if newName == "" {
		newName = p.Name + "-copy"
	}
	text := string(p.Source.Text)
	if !nameLineRe.MatchString(text) {
		return "", usagef("%s: no top-level name: line to rename", ref)
	}
	text = nameLineRe.ReplaceAllLiteralString(text, "name: "+newName)
	if p.Source.Builtin {
		text = strings.Replace(text, "# Built-in profile "+p.Name+" ", "# A copy of built-in profile "+p.Name+" ", 1)
	}
	desc := strings.ReplaceAll("copy of "+p.Name+": "+p.Description, "'", "''")
	if descLineRe.MatchString(text) {
		text = descLineRe.ReplaceAllLiteralString(text, "description: '"+desc+"'")
	}
	files := map[string][]byte{}
	for _, t := range p.Templates() {
		base := filepath.Base(t.Source)
		if strings.Contains(t.Source, " (files.") {
			continue // inline content stays inline
		}
		rel := templateRef(text, t.Name)
		if rel != "" && rel != base {
			text = strings.Replace(text, t.Name+": "+rel, t.Name+": "+base, 1)
		}
		files[base] = t.Text
	}
	files[newName+".yaml"] = []byte(text)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--out: %v", err)
	}
	for name := range files {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return "", usagef("--out: %s exists already: pick another directory or remove it", filepath.Join(dir, name))
		}
	}
	for name, b := range files {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return "", fmt.Errorf("--out: %v", err)
		}
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("--out: %v", err)
		}
	}
	return filepath.Join(dir, newName+".yaml"), nil
}

// templateRef is the template path a profile file's text gives for the
// rendered file name ("" when not found on one line).
func templateRef(text, name string) string {
	re := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(name) + `:\s*(\S+)\s*$`)
	if m := re.FindStringSubmatch(text); m != nil {
		return strings.Trim(m[1], `"'`)
	}
	return ""
}
