package plan

import (
	"strings"
	"testing"
)

func TestSeedsValidate(t *testing.T) {
	base := `
name: s
profiles: [nginx-stock, caddy-stock]
scenarios:
  - kind: sustained
    profiles: [nginx-stock]
  - kind: keepalive-1k
seeds:
  - finding: cliff
    seed: "003"
    says: "the first 28,231 requests worked"
    number: "28,231 then 502"
    scenarios: [sustained]
    profiles: [nginx-stock]
`
	p, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatalf("valid seeds refused: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`scenarios: [sustained]`, `scenarios: [nope]`, `scenario "nope" is not in the plan`},
		{`    profiles: [nginx-stock]
`, `    profiles: [haproxy]
`, "profile haproxy is not in the plan's profiles"},
		{`says: "the first 28,231 requests worked"`, `says: ""`, "says is empty"},
		{`    scenarios: [sustained]
    profiles`, `    profiles`, "scenarios is empty"},
	} {
		text := strings.Replace(base, c.from, c.to, 1)
		if c.from == `    profiles: [nginx-stock]
` {
			// the seed's profiles, not the scenario's
			i := strings.LastIndex(base, c.from)
			text = base[:i] + c.to + base[i+len(c.from):]
		}
		p, err := Parse([]byte(text))
		if err == nil {
			err = p.Check()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
	// Narrowing away a seed's scenario drops the seed, not the plan.
	p, _ = Parse([]byte(base))
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := p.Narrow(Selection{Scenarios: []string{"keepalive-1k"}}); err != nil {
		t.Fatal(err)
	}
	if len(p.Seeds) != 0 || p.Validate() != nil {
		t.Errorf("after narrowing to keepalive-1k: seeds %v, validate %v", p.Seeds, p.Validate())
	}
}
