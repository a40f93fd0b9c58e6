package gen

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/internal/run"
)

// readNoFile has one file, "body".
func readNoFile(path string) ([]byte, error) {
	if path == "body" {
		return []byte("x"), nil
	}
	return nil, os.ErrNotExist
}

func TestParseTargets(t *testing.T) {
	files := map[string]string{"body.json": `{"a":1}`, "empty": ""}
	read := func(p string) ([]byte, error) {
		b, ok := files[p]
		if !ok {
			return nil, os.ErrNotExist
		}
		return []byte(b), nil
	}
	in := `# a comment
GET http://127.0.0.1:8080/a?x=1
X-Account-ID: 8675309
Host: a.example

POST http://127.0.0.1:8080/b
Content-Type: application/json
@body.json
DELETE http://127.0.0.1:8080/c
GET http://127.0.0.1:8080/d
X-Colon: a:b


PUT http://127.0.0.1:8080/e
@empty
`
	ts, err := ParseTargets(strings.NewReader(in), read)
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{Method: "GET", URL: "http://127.0.0.1:8080/a?x=1", Headers: []string{"X-Account-ID: 8675309", "Host: a.example"}},
		{Method: "POST", URL: "http://127.0.0.1:8080/b", Headers: []string{"Content-Type: application/json"}, Body: []byte(`{"a":1}`)},
		{Method: "DELETE", URL: "http://127.0.0.1:8080/c"},
		{Method: "GET", URL: "http://127.0.0.1:8080/d", Headers: []string{"X-Colon: a:b"}},
		{Method: "PUT", URL: "http://127.0.0.1:8080/e", Body: []byte{}},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(ts), len(want), ts)
	}
	for i := range want {
		g, w := ts[i], want[i]
		if g.Method != w.Method || g.URL != w.URL || strings.Join(g.Headers, "|") != strings.Join(w.Headers, "|") ||
			string(g.Body) != string(w.Body) || (g.Body == nil) != (w.Body == nil) {
			t.Errorf("target %d: %+v, want %+v", i, g, w)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no targets"},
		{"# only a comment\n\n", "no targets"},
		{"X-Header: 1\n", `line 1: "X-Header: 1" is not a target`},
		{"get http://127.0.0.1/\n", "is not a target"},
		{"GET ftp://127.0.0.1/\n", `line 1: unsupported URL scheme "ftp"`},
		{"GET http://127.0.0.1/\nNoColon\n", `line 2: bad header "NoColon"`},
		{"GET http://127.0.0.1/\nName:\n", "line 2: bad header"},
		{"GET http://127.0.0.1/\n@\n", "line 2: @ without a file name"},
		{"GET http://127.0.0.1/\n@missing.json\n", "line 2: body file"},
		{"GET http://127.0.0.1/\n@body\nX: 1\n", `line 3: "X: 1" is not a target`},
		{"GET http://127.0.0.1/" + strings.Repeat("a", 2<<20) + "\n", "longer than 1 MiB"},
		{strings.Repeat("GET http://127.0.0.1/\n", MaxTargets+1), "more than 1000 targets"},
	} {
		_, err := ParseTargets(strings.NewReader(tc.in), readNoFile)
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: err %v, want a usage error with %q", tc.in, err, tc.want)
		}
	}
}

func TestWeightTable(t *testing.T) {
	tab, err := weightTable([]int{5, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tab); got != 7 {
		t.Fatalf("table of %d", got)
	}
	n := make([]int, 3)
	run := 0
	for i, v := range tab {
		n[v]++
		if v == 0 && i > 0 && tab[i-1] == 0 {
			run++
		}
	}
	if n[0] != 5 || n[1] != 1 || n[2] != 1 {
		t.Fatalf("table %v", tab)
	}
	if run > 3 {
		t.Errorf("table %v: target 0 in long runs, want it spread out", tab)
	}
	if _, err := ParseTargetWeights("5,0,1"); err == nil {
		t.Error("weight 0 accepted")
	}
	if _, err := ParseTargetWeights("5,x"); err == nil {
		t.Error("weight x accepted")
	}
	if _, err := weightTable([]int{maxTargetWeight, 1}); err == nil {
		t.Error("weights beyond the table's bound accepted")
	}
}

// Targets share one scheme and host:port; their Host headers may differ.
// Config.Headers go with every target, a target's own header of the same
// name replacing it; Config.Body goes with targets that have none.
func TestValidateTargets(t *testing.T) {
	base := func() Config {
		c := Config{Headers: []string{"X-All: 1", "Host: default.example"}, Body: []byte("dflt"), Method: "GET",
			Targets: []Request{
				{Method: "GET", URL: "http://127.0.0.1:8080/a", Headers: []string{"Host: a.example"}},
				{Method: "POST", URL: "http://127.0.0.1:8080/b", Body: []byte("own")},
			}}
		c.Defaults()
		return c
	}
	c, err := base().Prepare()
	if err != nil {
		t.Fatal(err)
	}
	reqs := c.spec.Reqs
	if len(reqs) != 2 || reqs[0].Target.Path != "/a" || reqs[1].Method != "POST" {
		t.Fatalf("reqs %+v", reqs)
	}
	if h := reqs[0].Headers; len(h) != 2 || h[0] != (run.Header{Name: "X-All", Value: "1"}) || h[1] != (run.Header{Name: "Host", Value: "a.example"}) {
		t.Errorf("target 1 headers %+v, want X-All and its own Host", h)
	}
	if h := reqs[1].Headers; len(h) != 2 || h[1] != (run.Header{Name: "Host", Value: "default.example"}) {
		t.Errorf("target 2 headers %+v, want the run's", h)
	}
	if string(reqs[0].Body) != "dflt" || string(reqs[1].Body) != "own" {
		t.Errorf("bodies %q %q", reqs[0].Body, reqs[1].Body)
	}
	for _, tc := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Targets[1].URL = "http://127.0.0.2:8080/b" }, "target 2 (http://127.0.0.2:8080/b) is not on http://127.0.0.1:8080"},
		{func(c *Config) { c.Targets[1].URL = "https://127.0.0.1:8080/b" }, "shares one scheme and host:port"},
		{func(c *Config) { c.Targets[1].URL = "http://127.0.0.1:8081/b" }, "is not on"},
		{func(c *Config) { c.Targets[1].Headers = []string{"bad"} }, `target 2: Headers: bad header "bad"`},
		{func(c *Config) { c.TargetWeights = []int{1} }, "1 weights for 2 targets"},
		{func(c *Config) { c.URL = "http://127.0.0.1:8080/other" }, "must be the first target's"},
		{func(c *Config) { c.HTTP3 = true }, "not yet HTTP3"},
	} {
		c := base()
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	w := base()
	w.TargetWeights = []int{3, 1}
	if c, err = w.Prepare(); err != nil {
		t.Fatal(err)
	}
	n := [2]int{}
	for j := int64(0); j < 400; j++ {
		n[c.spec.TargetOf(j)]++
	}
	if n != [2]int{300, 100} {
		t.Errorf("weights 3,1 over 400 requests: %v", n)
	}
}

func FuzzParseTargets(f *testing.F) {
	for _, s := range []string{
		"GET http://127.0.0.1:8080/a\nX-A: 1\n\nPOST http://127.0.0.1:8080/b\n@body\n",
		"# c\nGET http://h/\nHost: x\nGET http://h/2\n",
		"DELETE https://[::1]:8443/x?y=z\n\n\n",
		"GET\n", "@x\n", "GET http://h/\n:\n",
	} {
		f.Add(s)
	}
	read := func(p string) ([]byte, error) {
		if p == "body" {
			return []byte("b"), nil
		}
		return nil, errors.New("no such file")
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTargets(strings.NewReader(s), read)
		if err != nil {
			if !IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %v is not a one-line usage error", s, err)
			}
			return
		}
		if len(ts) == 0 || len(ts) > MaxTargets {
			t.Fatalf("%q: %d targets", s, len(ts))
		}
		for _, tr := range ts {
			if _, err := ParseTarget(tr.URL); err != nil || !startsWithMethod(tr.Method+" ") {
				t.Fatalf("%q: target %+v", s, tr)
			}
			if _, err := parseHeaders(tr.Headers); err != nil {
				t.Fatalf("%q: target %+v: headers: %v", s, tr, err)
			}
		}
	})
}
