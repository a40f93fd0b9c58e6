package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A plan's profiles list names profile files relative to the plan; its
// scenarios name them by name, roles come from the files, and plan show
// writes the paths back.
func TestPlanProfileFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "servers")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(sub, "mine.yaml"), "name: mine\nbinary: /bin/true\nversion: mine 1\ncommand: [\"{{.Binary}}\"]\n")
	write(filepath.Join(sub, "files.yaml"), "name: my-files\nrole: origin\nbinary: /bin/true\nversion: mine 1\ncommand: [\"{{.Binary}}\", \"{{.Root}}\"]\n")
	planFile := filepath.Join(dir, "plan.yaml")
	write(planFile, `name: byo
profiles: [nginx-stock, ./servers/mine.yaml, servers/files.yaml]
scenarios:
  - kind: keepalive-1k
  - name: pool
    kind: sustained
    profiles: [mine]
  - name: files
    kind: keepalive-1k
    role: origin
`)
	p, err := Load(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Profiles, ","); got != "nginx-stock,mine,my-files" {
		t.Fatalf("profiles %s", got)
	}
	ka, pool, files := &p.Scenarios[0], &p.Scenarios[1], &p.Scenarios[2]
	if !p.RunsOn(ka, "mine") || p.RunsOn(ka, "my-files") || !p.RunsOn(pool, "mine") || p.RunsOn(pool, "nginx-stock") || !p.RunsOn(files, "my-files") || p.RunsOn(files, "mine") {
		t.Errorf("RunsOn wrong for the files' roles")
	}
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "- ./servers/mine.yaml") || !strings.Contains(string(out), "- servers/files.yaml") {
		t.Errorf("plan show lost the profile files' paths:\n%s", out)
	}

	// Named from elsewhere, a profile file joins every scenario of its
	// role that lists its own profiles.
	write(filepath.Join(dir, "other.yaml"), "name: other\nbinary: /bin/true\nversion: x\ncommand: [\"{{.Binary}}\"]\n")
	name, err := p.AddProfileFile(filepath.Join(dir, "other.yaml"))
	if err != nil || name != "other" {
		t.Fatalf("AddProfileFile = %q, %v", name, err)
	}
	if !p.RunsOn(pool, "other") || p.RunsOn(files, "other") || !strings.Contains(strings.Join(p.Profiles, ","), "other") {
		t.Errorf("other: in pool %v, in files %v, profiles %v", p.RunsOn(pool, "other"), p.RunsOn(files, "other"), p.Profiles)
	}
	if again, err := p.AddProfileFile(filepath.Join(sub, "mine.yaml")); err != nil || again != "mine" {
		t.Errorf("the plan's own file named again: %q, %v", again, err)
	}

	// A bad profile file fails the plan's load with its line.
	write(filepath.Join(sub, "mine.yaml"), "name: mine\nbinary: /bin/true\nversion: mine 1\ncommand: [\"{{.Binary}}\"]\nthreads: 4\n")
	if _, err := Load(planFile); err == nil || !strings.Contains(err.Error(), "servers/mine.yaml:5: unknown field threads") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad profile file in a plan: %v", err)
	}
}
