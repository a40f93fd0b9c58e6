package plan

import (
	"testing"
)

// FuzzPlan feeds arbitrary bytes to the plan reader: it must never panic,
// and a plan it accepts must survive a marshal/parse round trip.
func FuzzPlan(f *testing.F) {
	for _, name := range BuiltinNames() {
		text, _ := BuiltinText(name)
		f.Add(text)
	}
	f.Add([]byte(minimal))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		if err := p.Check(); err != nil {
			return
		}
		_ = p.Scale(0.5)
		_ = p.Validate()
		for i := range p.Scenarios {
			_ = p.Scenarios[i].Estimate()
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatalf("valid plan does not marshal: %v", err)
		}
		q, err := Parse(out)
		if err != nil {
			t.Fatalf("marshalled plan does not parse: %v\n%s", err, out)
		}
		if err := q.Check(); err != nil {
			t.Fatalf("marshalled plan invalid: %v\n%s", err, out)
		}
	})
}
