package lab

import (
	"fmt"
	"io"

	"github.com/loadlab/loadlab/lab/plan"
)

// PlanNames are the built-in plans' names.
func PlanNames() []string { return plan.BuiltinNames() }

// ShowPlan returns a plan as YAML: a built-in as shipped, comments
// included; a file checked and with every default filled in (what Run
// would use). A plan that does not load is a UsageError.
func ShowPlan(name string) ([]byte, error) {
	if text, ok := plan.BuiltinText(name); ok {
		return text, nil
	}
	p, err := plan.Load(name)
	if err != nil {
		return nil, UsageError{err}
	}
	out, err := p.Marshal()
	if err != nil {
		return nil, fmt.Errorf("write plan: %w", err)
	}
	return out, nil
}

// ListPlans writes a line per built-in plan: its name and description.
func ListPlans(w io.Writer) error {
	for _, name := range plan.BuiltinNames() {
		p, err := plan.Load(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%-10s %s\n", name, p.Description)
	}
	return nil
}
