package scenario

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/plan"
)

// sumguy runs seed 003's file tests (4 servers x 1 KB/100 KB x HTTP/HTTPS,
// 100 connections, 20 s, 3 runs) on the origin profiles only, and its
// comment's budget ("about N minutes, the file tests about M") is the
// estimate's, to the minute within 10%.
func TestSumguyFileTestsAndBudget(t *testing.T) {
	p, lay := builtinLayouts(t, "sumguy")
	all := MakeBudget(p, mustUnitsAll(t, p, lay))
	var names []string
	for _, s := range p.Scenarios {
		if !s.IsOrigin() {
			continue
		}
		names = append(names, s.Name)
		if s.Method != plan.MethodClosed || s.Connections != 100 || s.Duration.D() != 20*time.Second || s.Runs != 3 {
			t.Errorf("%s: %s, %d connections, %s, %d runs; want seed 003's closed loop of 100 connections, 20 s, 3 runs", s.Name, s.Method, s.Connections, s.Duration, s.Runs)
		}
	}
	if got := strings.Join(names, ","); got != "files-1k-http,files-1k-https,files-100k-http,files-100k-https" {
		t.Fatalf("file scenarios %s", got)
	}
	units := mustUnitsAll(t, p, lay)
	servers := map[string]bool{}
	for _, u := range units {
		if u.Scenario.IsOrigin() {
			servers[u.Profile.Name] = true
			if !u.Profile.IsOrigin() {
				t.Errorf("file scenario %s runs on proxy %s", u.Scenario.Name, u.Profile.Name)
			}
		} else if u.Profile.IsOrigin() {
			t.Errorf("proxy scenario %s runs on origin %s", u.Scenario.Name, u.Profile.Name)
		}
	}
	if len(servers) != 4 || !servers["nginx-files"] || !servers["nginx-files-nosendfile"] || !servers["caddy-files"] || !servers["caddy-respond"] {
		t.Errorf("file tests on %v", servers)
	}
	if err := p.Narrow(plan.Selection{Scenarios: names}); err != nil {
		t.Fatal(err)
	}
	files := MakeBudget(p, mustUnitsAll(t, p, lay))
	text, _ := plan.BuiltinText("sumguy")
	m := regexp.MustCompile(`about (\d+) minutes, the file tests about (\d+)`).FindSubmatch(text)
	if m == nil {
		t.Fatal("sumguy's comment does not say its budget: \"about N minutes, the file tests about M\"")
	}
	for _, c := range []struct {
		what  string
		said  []byte
		isNow time.Duration
	}{{"the plan", m[1], all.Time}, {"the file tests", m[2], files.Time}} {
		said, _ := strconv.Atoi(string(c.said))
		if now := c.isNow.Minutes(); math.Abs(now-float64(said)) > 0.1*now+1 {
			t.Errorf("sumguy's comment says %s takes about %d minutes; the budget says %s: update the comment", c.what, said, FormatDuration(c.isNow))
		}
	}
	t.Logf("sumguy: %s; file tests: %s", all, files)
}
