package pin

import "testing"

func TestParseCountOrList(t *testing.T) {
	cases := []struct {
		in    string
		count int
		list  string
		err   bool
	}{
		{"", 0, "", false},
		{"auto", 0, "", false},
		{"2", 2, "", false},
		{" 0 ", 0, "", false},
		{"3-3", 0, "3", false},
		{"0,2-3", 0, "0,2-3", false},
		{"-1", 0, "", true},
		{"4097", 0, "", true},
		{"x", 0, "", true},
		{"3-1", 0, "", true},
	}
	for _, c := range cases {
		n, cpus, err := ParseCountOrList(c.in)
		if (err != nil) != c.err || n != c.count || cpus.String() != c.list {
			t.Errorf("ParseCountOrList(%q) = %d, %q, %v", c.in, n, cpus, err)
		}
	}
}
