package proxy

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/loadlab/loadlab/internal/findbin"
)

// maxProfileBytes bounds a profile file and each template.
const maxProfileBytes = 1 << 20

// source reads a profile file and the templates it names: from the disk
// (files users give, which must pass findbin.Trusted when the lab runs as
// root) or the embedded built-ins.
type source interface {
	read(name string) ([]byte, error)
	join(dir, rel string) string
	dir(name string) string
}

type diskSource struct{}

func (diskSource) read(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", name)
		}
		return nil, err
	}
	defer f.Close()
	if os.Geteuid() == 0 {
		// Root renders it into configs its servers run: the rule for
		// what root runs (owner, modes) holds for it too.
		if err := findbin.Trusted(name); err != nil {
			return nil, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(b) > maxProfileBytes {
		return nil, fmt.Errorf("%s is more than %d bytes", name, maxProfileBytes)
	}
	return b, nil
}

func (diskSource) join(dir, rel string) string {
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel)
	}
	return filepath.Join(dir, rel)
}

func (diskSource) dir(name string) string { return filepath.Dir(name) }

type embedSource struct{ fs embed.FS }

func (e embedSource) read(name string) ([]byte, error) { return e.fs.ReadFile(name) }

func (embedSource) join(dir, rel string) string { return path.Join(dir, rel) }

func (embedSource) dir(name string) string { return path.Dir(name) }

// memSource is a profile file held in memory (Parse): its files entries
// must be inline content.
type memSource struct {
	name string
	text []byte
}

func (m memSource) read(name string) ([]byte, error) {
	if name == m.name {
		return m.text, nil
	}
	return nil, fmt.Errorf("%s: a profile given as text has its files inline ({content: ...})", name)
}

func (memSource) join(dir, rel string) string { return path.Join(dir, rel) }

func (memSource) dir(name string) string { return path.Dir(name) }

// absPath makes path absolute.
func absPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %v", p, err)
	}
	return abs, nil
}
