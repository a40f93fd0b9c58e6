package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
)

// dirProxy of the fake lab: a proxy whose run directory is dir.
type fakeDirProxy struct {
	*fakeProxy
	dir string
}

func (p fakeDirProxy) Dir() string { return p.dir }

// A Caddy started as the proxy user owns its directory: a link it put in
// place of its rendered Caddyfile is not followed by root, and what it
// points at (root's file) is not copied into the results, which anyone
// may read.
func TestCopyConfigsRefusesLink(t *testing.T) {
	prof, err := proxy.Get("caddy-stock")
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(secret, []byte("root:$6$secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tf := range prof.Templates() {
		if err := os.Symlink(secret, filepath.Join(dir, tf.Name)); err != nil {
			t.Fatal(err)
		}
	}
	store, _, err := results.Open(t.TempDir(), &plan.Plan{Name: "t"}, results.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	store.F.Profiles = []results.ProfileRecord{{Name: prof.Name}}
	u := &unitRun{r: &Runner{Store: store}, spec: UnitSpec{Profile: prof}}
	err = u.copyConfigs(fakeDirProxy{&fakeProxy{prof: prof}, dir})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("copyConfigs through a link: err = %v", err)
	}
	filepath.WalkDir(store.Dir(), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "root:$6$secret") {
				t.Errorf("root's file was copied to %s", path)
			}
		}
		return nil
	})
}
