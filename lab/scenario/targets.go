package scenario

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/internal/atomicfile"
	"github.com/loadlab/loadlab/lab/backend"
)

// spreadTargets turns cfg, aimed at the proxy, into a run round-robin over
// every routed host (a scenario's spread: true): a targets file in
// vegeta's format, one "GET URL" with its "Host: appNN.lab.test" per named
// backend, written into the run directory (targets/, one per unit, as it
// was sent) and read back through gen's targets parser, so the run is
// what the file says. The generator sends request j to target j mod N.
func (u *unitRun) spreadTargets(cfg *gen.Config) error {
	n := u.spec.Scenario.NamedBackends()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s: round-robin over the %d routed hosts (spread: true)\n", u.spec.ID, n)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "GET %s\nHost: %s\n\n", cfg.URL, backend.AppHost(i))
	}
	dir := filepath.Join(u.r.Store.Dir(), "targets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("targets file: %v", err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(u.spec.ID, "/", "_")+".txt")
	if err := atomicfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("targets file: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("targets file: %v", err)
	}
	defer f.Close()
	ts, err := gen.ParseTargets(f, os.ReadFile)
	if err != nil {
		return fmt.Errorf("targets file %s: %v", path, err)
	}
	cfg.Targets = ts
	return nil
}
