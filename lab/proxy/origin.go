package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadlab/loadlab/lab/backend"
)

// Roles of a profile: what the server under test does with a request.
const (
	// RoleProxy forwards every request to the lab's backend.
	RoleProxy = "proxy"
	// RoleOrigin answers requests itself, from the files the lab writes
	// into Params.Root (seed 003's file-serving tests).
	RoleOrigin = "origin"
)

// Roles lists the roles in their usual order.
func Roles() []string { return []string{RoleProxy, RoleOrigin} }

// FilePaths are the files the lab writes into an origin's document root,
// as URL paths: the backend's fixed bodies (1 KiB, 100 KiB, 1 MiB), so an
// origin serves the very bytes a proxy fetches from the backend.
var FilePaths = []string{"/1k", "/100k", "/1m"}

// WriteFiles fills the document root dir (created 0755 if missing) with
// FilePaths, each the backend's body of that path (backend.Body), mode
// 0644. Every origin gets the same bytes.
func WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("document root %s: %v", dir, err)
	}
	for _, p := range FilePaths {
		if err := os.WriteFile(filepath.Join(dir, strings.TrimPrefix(p, "/")), backend.Body(p), 0o644); err != nil {
			return fmt.Errorf("document root: %v", err)
		}
	}
	return nil
}

// IsOrigin reports whether the profile serves requests itself.
func (p Profile) IsOrigin() bool { return p.Role == RoleOrigin }

// ServesFiles reports whether the profile answers the lab's paths with
// their bytes (a proxy: the backend's; an origin: the files in Root), so
// its bodies can be compared byte for byte; false for a fixed answer
// (caddy-respond).
func (p Profile) ServesFiles() bool { return p.FixedBody == nil }
