package gen

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

// The result says where the per-second histograms waited: the temporary
// directory, or memory with a note naming the directory that failed (the
// Kubernetes image's read-only root has no /tmp of its own; its Job mounts
// one). Read from the JSON, as a user or the lab sees it.
func TestRunNotesSpill(t *testing.T) {
	srv := startServer(t, reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	for _, tc := range []struct {
		tmp, spill, note string
	}{
		{t.TempDir(), "", ""},
		{filepath.Join(t.TempDir(), "missing"), result.SpillMemory, "kept in memory"},
	} {
		t.Setenv("TMPDIR", tc.tmp)
		if tc.spill == "" {
			tc.spill = tc.tmp
		}
		res := runOnTime(t, Config{URL: srv.url("http"), Connections: 1, Duration: 300 * time.Millisecond, Timeout: time.Second})
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var j struct {
			Generator struct {
				Spill string   `json:"spill"`
				Notes []string `json:"notes"`
			} `json:"generator"`
		}
		json.Unmarshal(b, &j)
		g := j.Generator
		if g.Spill != tc.spill {
			t.Errorf("TMPDIR %s: generator.spill %q, want %q", tc.tmp, g.Spill, tc.spill)
		}
		noted := false
		for _, n := range g.Notes {
			noted = noted || strings.Contains(n, tc.note) && strings.Contains(n, tc.tmp)
		}
		if tc.note != "" && !noted {
			t.Errorf("TMPDIR %s: notes %q, want one saying the histograms were %s and naming the directory", tc.tmp, g.Notes, tc.note)
		}
		if tc.note == "" && slices.ContainsFunc(g.Notes, func(n string) bool { return strings.Contains(n, "histograms") }) {
			t.Errorf("TMPDIR %s writable: notes %q", tc.tmp, g.Notes)
		}
	}
}
