package gen

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStages(t *testing.T) {
	st, err := ParseStages("30s:1000, 60s:5000,30s:0")
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{{30 * time.Second, 1000}, {60 * time.Second, 5000}, {30 * time.Second, 0}}
	if len(st) != 3 || st[0] != want[0] || st[1] != want[1] || st[2] != want[2] {
		t.Fatalf("%+v", st)
	}
	if d := StagesDuration(st); d != 2*time.Minute {
		t.Fatalf("duration %v", d)
	}
	if s := FormatStages(st); s != "30s:1000,1m0s:5000,30s:0" {
		t.Fatalf("FormatStages %q", s)
	}
	for _, in := range []string{"", "30s", "30s:", "x:10", "30s:x", "-1s:10", "30s:-1", "30s:NaN", "30s:2e7", "0s:100", "10s:0,10s:0", "1ms:0.5", "200h:1"} {
		if _, err := ParseStages(in); err == nil || !IsUsage(err) {
			t.Errorf("%q: err %v, want a usage error", in, err)
		}
	}
}

func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"30s:1000,60s:5000,30s:0", "0s:10,1s:10", "1s:1", "1h:1e7", "x", ":", "1s:1,,", "5ms:100000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStages(s)
		if err != nil {
			if !IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %v is not a one-line usage error", s, err)
			}
			return
		}
		again, err := ParseStages(FormatStages(st))
		if err != nil || len(again) != len(st) {
			t.Fatalf("%q -> %q: %v", s, FormatStages(st), err)
		}
		rp := newPacer(st)
		end := int64(StagesDuration(st))
		hint, prev := 0, int64(0)
		// The first requests (and a few far ones) are due in order, within
		// the run.
		js := []int64{0, 1, 2, 3, int64(rp.Total() / 2), int64(rp.Total()) - 1}
		slices.Sort(js)
		for _, j := range js {
			if j < 0 || float64(j) >= rp.Total() {
				continue
			}
			at := rp.At(j, &hint)
			if at < prev || at > end {
				t.Fatalf("%q: request %d at %d ns (previous %d, end %d)", s, j, at, prev, end)
			}
			prev = at
		}
	})
}
