package results

import (
	"strings"
	"testing"
)

// A resume is refused, with one line naming what changed, when the host,
// the loadlab binary, a profile file, its templates or its binary differ
// from what the results recorded; what is not recorded is not compared.
func TestChanged(t *testing.T) {
	rec := ProfileRecord{Name: "mine", File: "my/mine.yaml", SHA256: strings.Repeat("a", 64), ConfigSHA256: strings.Repeat("b", 64), Binary: "/usr/sbin/nginx", BinarySHA256: strings.Repeat("c", 64)}
	f := &File{Machine: Machine{Hostname: "lab1"}}
	id := Identity{Host: "lab1", LoadlabSHA256: strings.Repeat("1", 64), Profiles: []ProfileRecord{rec}}
	f.Record(id)
	if why := f.Changed(id); why != "" {
		t.Fatalf("the same run: %q", why)
	}
	for _, c := range []struct {
		name   string
		change func(*Identity)
		want   string
	}{
		{"host", func(id *Identity) { id.Host = "lab2" }, "the run was made on host lab1, this is lab2"},
		{"loadlab", func(id *Identity) { id.LoadlabSHA256 = strings.Repeat("2", 64) }, "the loadlab binary changed (SHA-256 111111111111, now 222222222222)"},
		{"profile file", func(id *Identity) { id.Profiles[0].SHA256 = strings.Repeat("d", 64) }, "profile mine's file my/mine.yaml changed (SHA-256 aaaaaaaaaaaa, now dddddddddddd)"},
		{"templates", func(id *Identity) { id.Profiles[0].ConfigSHA256 = strings.Repeat("e", 64) }, "profile mine's config templates changed"},
		{"binary", func(id *Identity) {
			id.Profiles[0].Binary, id.Profiles[0].BinarySHA256 = "/opt/nginx", strings.Repeat("f", 64)
		}, "profile mine's binary changed: /usr/sbin/nginx (SHA-256 cccccccccccc), now /opt/nginx (SHA-256 ffffffffffff)"},
	} {
		now := id
		now.Profiles = []ProfileRecord{rec}
		c.change(&now)
		if why := f.Changed(now); !strings.Contains(why, c.want) || strings.Contains(why, "\n") {
			t.Errorf("%s: %q, want %q", c.name, why, c.want)
		}
	}
	// Results of older versions recorded none of it: nothing to compare.
	old := &File{}
	if why := old.Changed(Identity{Host: "x", LoadlabSHA256: "y", Profiles: []ProfileRecord{rec}}); why != "" {
		t.Errorf("older results: %q", why)
	}
	// Recording again keeps the configs copied.
	f.Profiles[0].Configs = []ConfigCopy{{Path: "configs/mine/nginx.conf"}}
	f.Record(id)
	if len(f.Profiles) != 1 || len(f.Profiles[0].Configs) != 1 {
		t.Errorf("Record again: %+v", f.Profiles)
	}
}
