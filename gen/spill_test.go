package gen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

// Spilled histograms come back byte for byte, in order; the spill file is
// never visible in the temporary directory; a nil spill keeps them in
// memory.
func TestHistSpillRoundTrip(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s, err := newHistSpill(os.TempDir())
	if s == nil {
		t.Fatalf("no spill file in a writable TMPDIR: %v", err)
	}
	if ents, _ := os.ReadDir(os.Getenv("TMPDIR")); len(ents) != 0 {
		t.Fatalf("the spill file is visible: %v", ents)
	}
	secs := make([]result.PerSecond, 50)
	refs := make([]spillRef, len(secs))
	for i := range secs {
		h := newHist()
		for v := int64(1); v <= int64(i+1)*100; v++ {
			h.RecordValue(v)
		}
		enc, err := result.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		secs[i].Hist = enc
		if ref, ok := s.put(enc); ok {
			secs[i].Hist, refs[i] = "", ref
		} else {
			t.Fatalf("put %d refused", i)
		}
	}
	if err := s.restore(secs, refs); err != nil {
		t.Fatal(err)
	}
	for i, ps := range secs {
		h, err := result.DecodeHist(ps.Hist)
		if err != nil || h == nil || h.TotalCount() != int64(i+1)*100 {
			t.Fatalf("second %d: %v, count %v", i, err, h)
		}
	}
	var none *histSpill
	if _, ok := none.put("x"); ok || none.restore(secs, refs) != nil {
		t.Fatal("a nil spill must keep histograms in memory")
	}
	if _, ok := s.put(""); ok {
		t.Fatal("an empty histogram was spilled")
	}
}

// Without a usable temporary directory the run still works, histograms in
// memory.
func TestHistSpillNoTempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if s, err := newHistSpill(os.TempDir()); s != nil || err == nil {
		t.Fatal("a spill file in a directory that does not exist")
	}
}

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

// During a run the aggregator holds no histogram text: they are in the
// spill file until the result.
func TestAggregatorSpillsWhileRunning(t *testing.T) {
	s, _ := newHistSpill(os.TempDir())
	a := &aggregator{spill: s, r: &run{}}
	if a.spill == nil {
		t.Skip("no temporary file here")
	}
	h := newHist()
	h.RecordValue(42)
	ps := result.PerSecond{}
	ps.Hist, _ = result.EncodeHist(h)
	want := ps.Hist
	ref, ok := a.spill.put(ps.Hist)
	if ok {
		ps.Hist = ""
	}
	a.seconds = append(a.seconds, ps)
	a.spilled = append(a.spilled, ref)
	if a.seconds[0].Hist != "" {
		t.Fatal("the histogram stayed in memory")
	}
	out := a.perSecond()
	if out[0].Hist != want || strings.TrimSpace(out[0].Hist) == "" {
		t.Fatalf("restored %q, want %q", out[0].Hist, want)
	}
}
