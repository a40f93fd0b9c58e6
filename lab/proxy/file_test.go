package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadString loads a profile file with the given text from a fresh
// directory into a set of the built-ins.
func loadString(t *testing.T, text string) Profile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Builtins().Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeFiles writes name -> text into a fresh directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// mineYAML is a small valid profile file around a template mine.conf.tmpl.
const mineYAML = `name: mine
description: a test server
binary: /bin/true
version: ["{{.Binary}}", "--version"]
command: ["{{.Binary}}", "-c", "{{.Dir}}/mine.conf"]
files:
  mine.conf: mine.conf.tmpl
features: [tls, h2]
`

// A profile file loads into a set: its fields, its template rendered with
// the lab's parameters, and its identity (file and config SHA-256).
func TestLoadProfileFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"mine.yaml":      mineYAML,
		"mine.conf.tmpl": "listen {{.HTTPSAddr}} cert {{.Cert}} backend {{.Backend}} workers {{.Workers}} as {{.User}}\n",
	})
	set := Builtins()
	p, err := set.Load(filepath.Join(dir, "mine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "mine" || p.Proxy != "true" || p.Role != RoleProxy || p.User != UserLab || p.Features != (Features{TLS: true, H2: true}) || p.Source.Builtin || len(p.Source.SHA256) != 64 {
		t.Fatalf("loaded %+v", p)
	}
	if got, err := set.Get("mine"); err != nil || got.Source.File != filepath.Join(dir, "mine.yaml") {
		t.Fatalf("Get(mine) = %+v, %v", got.Source, err)
	}
	prm := sampleParams()
	prm.User = "loadlab"
	files, err := p.Render(prm)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(files["mine.conf"]), "listen 127.0.0.1:8443 cert /certs/fullchain.pem backend 127.0.0.1:9000 workers 2 as loadlab\n"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	argv, err := p.Command(prm)
	if err != nil || strings.Join(argv, " ") != "/usr/sbin/proxy -c /tmp/loadlab-run/mine.conf" {
		t.Errorf("Command = %q, %v", argv, err)
	}
	// The config's SHA-256 follows the template, not the YAML around it.
	sum := p.ConfigSHA256()
	os.WriteFile(filepath.Join(dir, "mine.conf.tmpl"), []byte("listen {{.HTTPSAddr}}\n"), 0o644)
	q, err := Builtins().Load(filepath.Join(dir, "mine.yaml"))
	if err != nil || q.ConfigSHA256() == sum || q.Source.SHA256 != p.Source.SHA256 {
		t.Errorf("after a template edit: config %s (was %s), file %s (was %s), %v", q.ConfigSHA256(), sum, q.Source.SHA256, p.Source.SHA256, err)
	}
	if _, err := set.Load(filepath.Join(dir, "mine.yaml")); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("the same name twice: %v", err)
	}
}

// .Routes is one route (the server name to the backend) by default, and a
// template renders every route the lab gives.
func TestRoutesParam(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"mine.yaml":      mineYAML,
		"mine.conf.tmpl": "{{range .Routes}}host {{.Host}} -> {{.Backend}}\n{{end}}",
	})
	p, err := Builtins().Load(filepath.Join(dir, "mine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prm := sampleParams()
	files, err := p.Render(prm)
	if err != nil || string(files["mine.conf"]) != "host bench.lab -> 127.0.0.1:9000\n" {
		t.Fatalf("one route: %q, %v", files["mine.conf"], err)
	}
	prm.Routes = []Route{{Host: "app01.lab.test", Backend: "127.0.0.1:9001"}, {Host: "app02.lab.test", Backend: "[::1]:9002"}}
	files, err = p.Render(prm)
	if want := "host app01.lab.test -> 127.0.0.1:9001\nhost app02.lab.test -> [::1]:9002\n"; err != nil || string(files["mine.conf"]) != want {
		t.Fatalf("two routes: %q, %v; want %q", files["mine.conf"], err, want)
	}
	prm.Routes = []Route{{Host: "bad host", Backend: "127.0.0.1:9001"}}
	if _, err := p.Render(prm); err == nil || !strings.Contains(err.Error(), "Routes[0].Host") {
		t.Errorf("a bad route host: %v", err)
	}
}

// A bad profile file is refused at load with one line that names the
// file, the line and the field.
func TestBadProfileFiles(t *testing.T) {
	tmpl := "listen {{.HTTPSAddr}}\n"
	cases := []struct {
		name, yaml, tmpl, want string
	}{
		{"unknown field", mineYAML + "keepalive: 32\n", tmpl, "mine.yaml:9: unknown field keepalive"},
		{"bad yaml", "name: [mine\n", tmpl, "mine.yaml:1: did not find expected"},
		{"unknown parameter", mineYAML, "a\nb {{.Cert}}\nc {{if .Root}}{{.Sendfile}}{{end}}\n", "mine.conf.tmpl:3:16: unknown parameter .Sendfile"},
		{"unknown route field", mineYAML, "{{range .Routes}}{{.Port}}{{end}}", "mine.conf.tmpl:1:19: unknown parameter .Port"},
		{"unknown parameter in command", strings.Replace(mineYAML, `"-c"`, `"-w{{.Threads}}"`, 1), tmpl, "mine.yaml:5: command[1]: unknown parameter .Threads"},
		{"missing template", strings.Replace(mineYAML, "mine.conf.tmpl", "gone.tmpl", 1), tmpl, "mine.yaml:7: files.mine.conf: the template cannot be read"},
		{"template syntax", mineYAML, "{{if .Dir}}x\n", "mine.conf.tmpl:2: unexpected EOF"},
		{"no name", strings.Replace(mineYAML, "name: mine\n", "", 1), tmpl, "mine.yaml:1: name is missing"},
		{"built-in name", strings.Replace(mineYAML, "name: mine", "name: nginx-stock", 1), tmpl, "mine.yaml:1: name nginx-stock is a built-in profile's"},
		{"bad role", mineYAML + "role: cache\n", tmpl, "mine.yaml:9: role \"cache\""},
		{"bad feature", strings.Replace(mineYAML, "[tls, h2]", "[tls, quic]", 1), tmpl, "mine.yaml:8: feature \"quic\""},
		{"command not the binary", strings.Replace(mineYAML, `command: ["{{.Binary}}"`, `command: ["/bin/sh"`, 1), tmpl, "mine.yaml:5: command must start with \"{{.Binary}}\""},
		{"version using the run", strings.Replace(mineYAML, `"--version"`, `"{{.Dir}}"`, 1), tmpl, "mine.yaml:4: version[1]: unknown parameter .Dir"},
		{"fixed body on a proxy", mineYAML + "fixed_body: hi\n", tmpl, "mine.yaml:9: fixed_body is for origins"},
		{"two documents", mineYAML + "---\nname: x\n", tmpl, "mine.yaml:9: more than one YAML document"},
		{"file outside the run directory", strings.Replace(mineYAML, "mine.conf:", "../mine.conf:", 1), tmpl, "mine.yaml:7: files: \"../mine.conf\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"mine.yaml": c.yaml, "mine.conf.tmpl": c.tmpl})
			_, err := Builtins().Load(filepath.Join(dir, "mine.yaml"))
			if err == nil {
				t.Fatal("loaded")
			}
			msg := strings.TrimPrefix(err.Error(), dir+"/")
			if !strings.HasPrefix(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("error\n  %s\nwant one line starting\n  %s", msg, c.want)
			}
		})
	}
}

// extends starts from a profile (a built-in, or a file) and overrides what
// the file sets: here nginx-keepalive's config with another binary.
func TestExtends(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "nginx-1.28")
	writeExe(t, bin, "#!/bin/sh\necho 'nginx version: nginx/1.28.3' >&2\n")
	dir := writeFiles(t, map[string]string{
		"newer.yaml": "name: nginx-keepalive-1.28\nextends: nginx-keepalive\nbinary: " + bin + "\n",
		"child.yaml": "name: child\nextends: ./newer.yaml\ndescription: one more\nfiles:\n  extra.conf: {content: \"x {{.Dir}}\"}\n",
	})
	set := Builtins()
	p, err := set.Load(filepath.Join(dir, "newer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Get("nginx-keepalive")
	if p.Proxy != "nginx" || p.User != UserRoot || p.Role != RoleProxy || p.Description != base.Description || p.ConfigSHA256() != base.ConfigSHA256() || p.Source.Extends != "nginx-keepalive" {
		t.Fatalf("extended profile %+v", p)
	}
	if v, err := p.Version(bin); err != nil || v != "nginx 1.28.3" {
		t.Errorf("version %q, %v", v, err)
	}
	if path, err := p.Find(); err != nil || path != bin {
		t.Errorf("Find = %q, %v", path, err)
	}
	c, err := set.Load(filepath.Join(dir, "child.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, f := range c.Templates() {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "extra.conf,nginx.conf" || c.Description != "one more" || c.Binary != bin {
		t.Errorf("child: files %v, description %q, binary %q", names, c.Description, c.Binary)
	}
	// The parent's file is part of the child's identity.
	os.WriteFile(filepath.Join(dir, "newer.yaml"), []byte("name: nginx-keepalive-1.28\nextends: nginx-keepalive128\nbinary: "+bin+"\n"), 0o644)
	c2, err := Builtins().Load(filepath.Join(dir, "child.yaml"))
	if err != nil || c2.Source.SHA256 == c.Source.SHA256 {
		t.Errorf("child's SHA-256 unchanged after its parent changed (%v)", err)
	}
}
