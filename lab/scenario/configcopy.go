package scenario

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loadlab/loadlab/internal/safefs"
	"github.com/loadlab/loadlab/lab/results"
)

// dirProxy is a running proxy whose run directory holds its rendered
// config (lab/session.Proxy).
type dirProxy interface {
	Dir() string
}

// copyConfigs copies the rendered config files of the unit's profile
// from its run directory to the results' configs/PROFILE/, once per
// profile (its first start), and records them with their SHA-256: what
// the report links and compare reads.
func (u *unitRun) copyConfigs(px Proxy) error {
	dp, ok := px.(dirProxy)
	rec := u.r.Store.F.Profile(u.spec.Profile.Name)
	if !ok || rec == nil || len(rec.Configs) > 0 {
		return nil
	}
	rel := results.ConfigDir(u.spec.Profile.Name)
	dst := filepath.Join(u.r.Store.Dir(), rel)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	var copies []results.ConfigCopy
	for _, t := range px.Profile().Templates() {
		// The directory may be the proxy user's: root copies no file
		// it linked there (safefs.OpenRead).
		b, err := readPrivate(filepath.Join(dp.Dir(), t.Name))
		if err != nil {
			return fmt.Errorf("copy %s's rendered %s: %v", u.spec.Profile.Name, t.Name, err)
		}
		path := filepath.Join(dst, t.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		sum, err := results.FileSHA256(path)
		if err != nil {
			return err
		}
		copies = append(copies, results.ConfigCopy{Path: filepath.ToSlash(filepath.Join(rel, t.Name)), SHA256: sum})
	}
	return u.r.Store.Update(func(f *results.File) {
		if r := f.Profile(u.spec.Profile.Name); r != nil {
			r.Configs = copies
		}
	})
}

// readPrivate reads a file of a directory another user may write, never
// through a link or a hard link (safefs.OpenRead).
func readPrivate(path string) ([]byte, error) {
	f, err := safefs.OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
