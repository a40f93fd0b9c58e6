package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
)

// The report says what ran for each profile (file, binary, config, each
// with its SHA-256) and links the rendered configs; rows of one server
// that ran two versions carry their version in their label, the others
// do not.
func TestProfilesSectionAndVersionLabels(t *testing.T) {
	f := fullFile(t)
	f.Profiles = []results.ProfileRecord{
		{Name: "nginx-stock", Proxy: "nginx", Builtin: true, SHA256: strings.Repeat("a", 64), ConfigSHA256: strings.Repeat("b", 64),
			Binary: "/usr/sbin/nginx", Version: "nginx 1.22.1", BinarySHA256: strings.Repeat("c", 64),
			Configs: []results.ConfigCopy{{Path: "configs/nginx-stock/nginx.conf", SHA256: strings.Repeat("d", 64)}}},
		{Name: "nginx-keepalive", Proxy: "nginx", File: "my/nginx-keepalive.yaml", SHA256: strings.Repeat("e", 64), ConfigSHA256: strings.Repeat("f", 64),
			Binary: "/opt/nginx-1.28/sbin/nginx", Version: "nginx 1.28.3", BinarySHA256: strings.Repeat("1", 64)},
	}
	for i := range f.Proxies {
		if f.Proxies[i].Profile == "nginx-keepalive" {
			f.Proxies[i].Version = "nginx 1.28.3"
		}
	}
	r, md := build(t, f)
	for _, want := range []string{
		"## Profiles",
		"| nginx-stock | nginx 1.22.1 | /usr/sbin/nginx | cccccccccccc | built-in | aaaaaaaaaaaa | bbbbbbbbbbbb | configs/nginx-stock/nginx.conf |",
		"| nginx-keepalive | nginx 1.28.3 | /opt/nginx-1.28/sbin/nginx | 111111111111 | my/nginx-keepalive.yaml | eeeeeeeeeeee | ffffffffffff | - |",
		"- nginx-stock: [nginx.conf](configs/nginx-stock/nginx.conf)",
		"| nginx-keepalive [nginx 1.28.3] | 20,000 |",
		"| caddy-stock | 11,960 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	page, err := r.HTML()
	if err != nil || !strings.Contains(string(page), `<a href="configs/nginx-stock/nginx.conf">nginx.conf</a>`) {
		t.Errorf("report.html does not link the config (%v)", err)
	}
	if t.Failed() {
		t.Log(md)
	}
}
