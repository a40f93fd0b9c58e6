package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"text/template"

	"github.com/loadlab/loadlab/internal/findbin"
)

// Features are the protocols a profile serves on its TLS listener.
type Features struct {
	TLS bool `json:"tls"` // HTTPS on HTTPSPort
	H2  bool `json:"h2"`  // HTTP/2 by ALPN on HTTPSPort
	H3  bool `json:"h3"`  // HTTP/3 on UDP HTTPSPort
}

// String lists the enabled features, e.g. "tls,h2,h3", or "-" for none.
func (f Features) String() string {
	var s []string
	if f.TLS {
		s = append(s, "tls")
	}
	if f.H2 {
		s = append(s, "h2")
	}
	if f.H3 {
		s = append(s, "h3")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// Who starts a server (Profile.User).
const (
	// UserLab: the lab starts the server as its unprivileged proxy user
	// (the default).
	UserLab = "lab"
	// UserRoot: the lab starts the server as root, and the server's
	// config hands it the user to serve as (Params.User): a master that
	// keeps root, as nginx, HAProxy and h2o do.
	UserRoot = "root"
)

// StopSignal is the signal that asks every server to exit.
const StopSignal = syscall.SIGTERM

// Profile is one server configuration the lab can run, as a profile file
// defines it (file.go): the built-ins are embedded profile files.
type Profile struct {
	Name        string   // e.g. "nginx-stock"
	Proxy       string   // the server software: "nginx", "caddy", ... (the file's server:)
	Description string   // one line: what the profile reproduces, what is stock and what the lab changed
	Features    Features // protocols the rendered config serves
	// Role is RoleProxy (forwards to the backend) or RoleOrigin (serves
	// the lab's files in Params.Root itself).
	Role string
	// FixedBody, if set, is what the profile answers for every path (an
	// origin that serves no file, such as caddy-respond); nil: it answers
	// the lab's paths with their bytes (ServesFiles).
	FixedBody []byte
	// User is UserLab or UserRoot: who the lab starts the server as.
	User string
	// Binary is the server binary: a name searched as FindBinary does, or
	// an absolute path (a file's relative path is made absolute at load).
	Binary string
	// Source says where the profile came from.
	Source Source

	version versionSpec
	command []*template.Template
	files   []configFile
}

// Source is where a profile came from and what identifies its text.
type Source struct {
	// File is the profile file as it was named ("" for a built-in).
	File string `json:"file,omitempty"`
	// Builtin reports an embedded profile file.
	Builtin bool `json:"builtin,omitempty"`
	// SHA256 is the profile file's SHA-256 (with extends, over the file
	// and the SHA-256 of the profile it extends), hex.
	SHA256 string `json:"sha256"`
	// Extends names the profile it starts from ("" for none).
	Extends string `json:"extends,omitempty"`
	// Text is the profile file's bytes.
	Text []byte `json:"-"`
}

// configFile is one file a profile renders into its run directory.
type configFile struct {
	Name   string // path relative to the run directory
	Source string // the template's file, or "FILE: files.NAME" for inline content
	Text   []byte // the template text
	tmpl   *template.Template
}

// TemplateFile is one of a profile's templates as its file gives it.
type TemplateFile struct {
	Name   string // the rendered file's path in the run directory
	Source string // where the template text came from
	Text   []byte
}

// Templates returns the profile's config templates, by rendered name.
func (p Profile) Templates() []TemplateFile {
	out := make([]TemplateFile, 0, len(p.files))
	for _, f := range p.files {
		out = append(out, TemplateFile{Name: f.Name, Source: f.Source, Text: f.Text})
	}
	return out
}

// ConfigSHA256 identifies the profile's config: the SHA-256 (hex) over its
// templates' names and texts, in name order. Two runs of profiles with the
// same ConfigSHA256 rendered the same config for the same addresses.
func (p Profile) ConfigSHA256() string {
	h := sha256.New()
	for _, f := range p.files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Text))
		h.Write(f.Text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Find locates the profile's binary: an absolute path as is, a name as
// FindBinary searches for it; either must pass findbin.Trusted, the one
// rule for a binary the lab runs as root. A missing binary gives an error
// wrapping ErrNotFound that says how to install it.
func (p Profile) Find() (string, error) {
	if p.Binary == "" {
		return "", fmt.Errorf("profile %s names no binary", p.Name)
	}
	if !strings.Contains(p.Binary, "/") {
		return FindBinary(p.Binary)
	}
	if !findbin.IsExecutable(p.Binary) {
		return "", fmt.Errorf("%w: %s (profile %s's binary) is not an executable file", ErrNotFound, p.Binary, p.Name)
	}
	return p.Binary, findbin.Trusted(p.Binary)
}

// WithBinary returns p running the binary at path (absolute) instead of
// its own: `--bin NAME=PATH` for one run.
func (p Profile) WithBinary(path string) Profile {
	p.Binary = path
	return p
}

// ErrNotFound is wrapped by Find errors when the binary is not installed.
var ErrNotFound = findbin.ErrNotFound

// Status finds p's binary and asks its version. A missing binary gives
// found=false and an error wrapping ErrNotFound that says how to install it;
// a binary whose version cannot be read gives found=true and the error.
func Status(p Profile) (found bool, path, version string, err error) {
	path, err = p.Find()
	if err != nil {
		return false, "", "", err
	}
	version, err = p.Version(path)
	return true, path, version, err
}

// versionSpec is how a profile finds its binary's version (the file's
// version, version_match and version_module).
type versionSpec struct {
	Text   string               // a fixed version: no command
	Args   []*template.Template // argv ({{.Binary}}); the first line printed is the version
	Match  *regexp.Regexp       // if set: the version is Proxy + " " + its first group (or whole match) in the output
	Module string               // a Go module: its version in the binary's build info comes first
}
