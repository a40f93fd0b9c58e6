package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
)

// withRecord rewrites a results directory's profile record of nginx-stock.
func withRecord(t *testing.T, dir string, rec results.ProfileRecord) string {
	t.Helper()
	f, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	f.Profiles = []results.ProfileRecord{rec}
	for _, u := range f.Units {
		u.Profile = rec.Name
	}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(filepath.Join(dir, results.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compare says, per row, when the two runs ran another config or binary
// of its profile, and says nothing when they ran the same.
func TestCompareSaysWhatRanDiffers(t *testing.T) {
	base := results.ProfileRecord{Name: "nginx-stock", Proxy: "nginx", Builtin: true, SHA256: strings.Repeat("a", 64), ConfigSHA256: strings.Repeat("b", 64),
		Binary: "/usr/sbin/nginx", Version: "nginx 1.22.1", BinarySHA256: strings.Repeat("c", 64)}
	other := base
	other.ConfigSHA256, other.SHA256 = strings.Repeat("d", 64), strings.Repeat("e", 64)
	other.Binary, other.Version, other.BinarySHA256 = "/opt/nginx/sbin/nginx", "nginx 1.28.3", strings.Repeat("f", 64)
	a := withRecord(t, labDir(t, 10000, 2000, 0.5, []float64{5000}), base)
	same := withRecord(t, labDir(t, 10000, 2000, 0.5, []float64{5000}), base)
	b := withRecord(t, labDir(t, 10000, 2000, 0.5, []float64{5000}), other)

	rep, err := Compare(load(t, a), load(t, same), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if len(r.Ran) > 0 {
			t.Errorf("%s: the same setup reported as differing: %v", r.Key, r.Ran)
		}
	}
	rep, err = Compare(load(t, a), load(t, b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		got := strings.Join(r.Ran, "; ")
		if !strings.Contains(got, "the config differs (templates SHA-256 bbbbbbbbbbbb in A, dddddddddddd in B)") ||
			!strings.Contains(got, "the binary differs (nginx 1.22.1, /usr/sbin/nginx, SHA-256 cccccccccccc in A; nginx 1.28.3, /opt/nginx/sbin/nginx, SHA-256 ffffffffffff in B)") {
			t.Errorf("%s: ran differs %q", r.Key, got)
		}
	}
	var text, md strings.Builder
	rep.WriteText(&text)
	rep.WriteMarkdown(&md)
	for _, out := range []string{text.String(), md.String()} {
		if !strings.Contains(out, "Not the same setup") || !strings.Contains(out, "what ran: the config differs") {
			t.Errorf("the report does not say what ran differs:\n%s", out)
		}
	}
}
