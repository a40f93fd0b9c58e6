package pin

import "testing"

// FuzzParseList checks that ParseList never panics and that every parsed set
// is sorted, unique, in range, and survives a String round trip.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "1-3", "0,2-5", " 1 , 3 - 4 ", "3-1", "a", "", "-1", "4096", "0-4095"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseList(s)
		if err != nil {
			return
		}
		if len(set) == 0 {
			t.Fatalf("ParseList(%q) returned an empty set without error", s)
		}
		for i, c := range set {
			if c < 0 || c > MaxCPU {
				t.Fatalf("ParseList(%q) has out-of-range cpu %d", s, c)
			}
			if i > 0 && set[i-1] >= c {
				t.Fatalf("ParseList(%q) = %v is not sorted and unique", s, set)
			}
			if !set.Contains(c) {
				t.Fatalf("Contains(%d) false on %v", c, set)
			}
		}
		again, err := ParseList(set.String())
		if err != nil {
			t.Fatalf("String() %q of ParseList(%q) does not re-parse: %v", set.String(), s, err)
		}
		if !again.Equal(set) {
			t.Fatalf("round trip of %q: %v != %v", s, again, set)
		}
		if again.String() != set.String() {
			t.Fatalf("String not canonical: %q vs %q", again.String(), set.String())
		}
	})
}
