package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Spilled histograms come back byte for byte, in order; the spill file is
// never visible in the temporary directory; a nil spill keeps them in
// memory.
func TestHistSpillRoundTrip(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := newHistSpill()
	if s == nil {
		t.Fatal("no spill file in a writable TMPDIR")
	}
	if ents, _ := os.ReadDir(os.Getenv("TMPDIR")); len(ents) != 0 {
		t.Fatalf("the spill file is visible: %v", ents)
	}
	secs := make([]PerSecond, 50)
	for i := range secs {
		h := newHist()
		for v := int64(1); v <= int64(i+1)*100; v++ {
			h.RecordValue(v)
		}
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		secs[i].Hist = enc
		if ref, ok := s.put(enc); ok {
			secs[i].Hist, secs[i].spill = "", ref
		} else {
			t.Fatalf("put %d refused", i)
		}
	}
	if err := s.restore(secs); err != nil {
		t.Fatal(err)
	}
	for i, ps := range secs {
		h, err := DecodeHist(ps.Hist)
		if err != nil || h == nil || h.TotalCount() != int64(i+1)*100 || ps.spill.n != 0 {
			t.Fatalf("second %d: %v, count %v, ref %+v", i, err, h, ps.spill)
		}
	}
	var none *histSpill
	if _, ok := none.put("x"); ok || none.restore(secs) != nil {
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
	if s := newHistSpill(); s != nil {
		t.Fatal("a spill file in a directory that does not exist")
	}
}

// During a run the aggregator holds no histogram text: they are in the
// spill file until the result.
func TestAggregatorSpillsWhileRunning(t *testing.T) {
	a := &aggregator{spill: newHistSpill(), r: &run{}}
	if a.spill == nil {
		t.Skip("no temporary file here")
	}
	h := newHist()
	h.RecordValue(42)
	ps := PerSecond{}
	ps.Hist, _ = EncodeHist(h)
	want := ps.Hist
	if ref, ok := a.spill.put(ps.Hist); ok {
		ps.Hist, ps.spill = "", ref
	}
	a.seconds = append(a.seconds, ps)
	if a.seconds[0].Hist != "" {
		t.Fatal("the histogram stayed in memory")
	}
	out := a.perSecond()
	if out[0].Hist != want || strings.TrimSpace(out[0].Hist) == "" {
		t.Fatalf("restored %q, want %q", out[0].Hist, want)
	}
}
