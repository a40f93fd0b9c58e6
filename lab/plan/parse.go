package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxPlanBytes bounds a plan file; real plans are a few KiB.
const maxPlanBytes = 1 << 20

// Parse reads one plan from YAML over DefaultSearch and DefaultPass, so an
// explicit 0 stays 0. Unknown fields are errors; the error is one line and
// names the line of the file where yaml found the problem. Parse does not
// fill the other defaults or validate: see Resolve and Validate.
func Parse(data []byte) (*Plan, error) {
	if len(data) > maxPlanBytes {
		return nil, fmt.Errorf("plan is %d bytes, more than the %d a plan may have", len(data), maxPlanBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// Decode over the defaults: a field the file sets, to 0 too, keeps
	// its value; only fields it leaves out have the default.
	p := Plan{Search: DefaultSearch(), Pass: DefaultPass()}
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("plan is empty: start from `loadlab lab plan show quick`")
		}
		return nil, fmt.Errorf("bad plan: %s", oneLine(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errors.New("bad plan: more than one YAML document; keep one plan per file")
	}
	return &p, nil
}

// Load returns the built-in plan called nameOrPath, or reads the file at
// that path; the result is parsed, resolved and validated.
func Load(nameOrPath string) (*Plan, error) {
	if text, ok := builtinText(nameOrPath); ok {
		p, err := Parse(text)
		if err != nil {
			return nil, fmt.Errorf("built-in plan %s: %v", nameOrPath, err)
		}
		return p, p.Check()
	}
	f, err := os.Open(nameOrPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no built-in plan or file called %q: use one of %s, or a YAML file", nameOrPath, strings.Join(BuiltinNames(), ", "))
		}
		return nil, fmt.Errorf("read plan: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPlanBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read plan %s: %v", nameOrPath, err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", nameOrPath, err)
	}
	if err := p.loadProfileFiles(filepath.Dir(nameOrPath)); err != nil {
		return nil, fmt.Errorf("plan %s: %v", nameOrPath, err)
	}
	return p, p.Check()
}

// Check resolves defaults and validates the plan.
func (p *Plan) Check() error {
	if err := p.Resolve(); err != nil {
		return err
	}
	return p.Validate()
}

// Marshal writes p as YAML (the plan format, defaults included; a
// scenario's size without the path it picks, so the output parses again).
func (p *Plan) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	out := *p
	out.Profiles = slices.Clone(p.Profiles)
	for i, name := range out.Profiles {
		if ref, ok := p.files[name]; ok {
			out.Profiles[i] = ref
		}
	}
	out.Scenarios = append([]Scenario(nil), p.Scenarios...)
	for i := range out.Scenarios {
		if out.Scenarios[i].Size != "" {
			out.Scenarios[i].Path = ""
		}
	}
	if err := enc.Encode(&out); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// oneLine folds a multi-line yaml error into one line.
func oneLine(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: ")
	s = strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
	s = strings.ReplaceAll(s, "\n  ", "; ")
	return strings.ReplaceAll(s, "\n", "; ")
}
