package pin

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseListValid(t *testing.T) {
	cases := []struct {
		in   string
		want CPUSet
		str  string
	}{
		{"0", CPUSet{0}, "0"},
		{"1-3", CPUSet{1, 2, 3}, "1-3"},
		{"0,2-5", CPUSet{0, 2, 3, 4, 5}, "0,2-5"},
		{" 0 , 2 - 5 ", CPUSet{0, 2, 3, 4, 5}, "0,2-5"},
		{"0-1\n", CPUSet{0, 1}, "0-1"},
		{"5,1,3,2", CPUSet{1, 2, 3, 5}, "1-3,5"},
		{"0-3,2-6", CPUSet{0, 1, 2, 3, 4, 5, 6}, "0-6"},
		{"7-7", CPUSet{7}, "7"},
		{"007", CPUSet{7}, "7"},
		{"4095", CPUSet{4095}, "4095"},
		{"0,2,4,6", CPUSet{0, 2, 4, 6}, "0,2,4,6"},
	}
	for _, c := range cases {
		got, err := ParseList(c.in)
		if err != nil {
			t.Errorf("ParseList(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("ParseList(%q) = %v, want %v", c.in, got, c.want)
		}
		if got.String() != c.str {
			t.Errorf("ParseList(%q).String() = %q, want %q", c.in, got.String(), c.str)
		}
	}
}

func TestParseListErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"3-1", "backwards"},
		{"a", "not a CPU id"},
		{"1,a-3", "not a CPU id"},
		{"-1", "negative"},
		{"0,-2", "negative"},
		{"1--3", "negative"},
		{"4096", "above the maximum 4095"},
		{"0-99999999999999999999", "above the maximum"},
		{"0,", "empty element"},
		{",0", "empty element"},
		{"1-", "missing end"},
		{"+1", "not a CPU id"},
		{"1.5", "not a CPU id"},
	}
	for _, c := range cases {
		got, err := ParseList(c.in)
		if err == nil {
			t.Errorf("ParseList(%q) = %v, want error with %q", c.in, got, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseList(%q) error %q, want one line containing %q", c.in, err, c.want)
		}
	}
}

func TestCPUSetOps(t *testing.T) {
	a := NewCPUSet(5, 1, 3, 3, 2)
	if a.String() != "1-3,5" {
		t.Fatalf("NewCPUSet = %v", a)
	}
	if !a.Contains(5) || a.Contains(4) || a.Contains(0) {
		t.Errorf("Contains wrong on %v", a)
	}
	b := CPUSet{2, 4, 5}
	if got := a.Union(b).String(); got != "1-5" {
		t.Errorf("Union = %s", got)
	}
	if got := a.Intersect(b).String(); got != "2,5" {
		t.Errorf("Intersect = %s", got)
	}
	if got := a.Minus(b).String(); got != "1,3" {
		t.Errorf("Minus = %s", got)
	}
	if !(CPUSet{2, 5}).IsSubsetOf(a) || b.IsSubsetOf(a) {
		t.Error("IsSubsetOf wrong")
	}
	if (CPUSet{}).String() != "" {
		t.Error("empty set should print as empty string")
	}
}

func TestCPUSetJSON(t *testing.T) {
	in := struct {
		S CPUSet `json:"s"`
		E CPUSet `json:"e"`
	}{S: CPUSet{0, 2, 3, 4}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"s":"0,2-4","e":""}` {
		t.Fatalf("json = %s", b)
	}
	var out struct {
		S CPUSet `json:"s"`
		E CPUSet `json:"e"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !out.S.Equal(in.S) || len(out.E) != 0 {
		t.Fatalf("round trip = %+v", out)
	}
	if err := json.Unmarshal([]byte(`{"s":"3-1"}`), &out); err == nil {
		t.Fatal("bad list accepted")
	}
}
