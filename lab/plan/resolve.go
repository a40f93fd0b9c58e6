package plan

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// kindDefaults are what a scenario of each kind uses when it says nothing.
var kindDefaults = map[string]Scenario{
	KindKeepalive: {Method: MethodSearch, Path: "/1k", Connections: 200},
	// 20 connections x the generator's 10 streams: as many requests in
	// flight as keepalive-1k's 200 connections.
	KindKeepaliveH2: {Method: MethodSearch, Path: "/1k", Connections: 20},
	KindHandshake:   {Method: MethodSearch, Path: "/1k", Connections: 200},
	KindFile:        {Method: MethodSearch, Path: "/1m", Connections: 50},
	KindH3:          {Method: MethodSearch, Path: "/1k", Connections: 50},
	KindFixedRate:   {Method: MethodFixed, Path: "/1k", Connections: 200, Runs: 2, Duration: Duration(2 * time.Minute), Rates: []float64{1500}},
	KindSustained:   {Method: MethodClosed, Path: "/1k", Connections: 100, Runs: 1, Duration: Duration(90 * time.Second)},
	// Seed 001: hey -z 30s -c 50 -host whoami01.bench.test, plain HTTP,
	// three runs, twenty backends. The 1 KiB body stands for whoami's
	// answer (about 300 bytes of request echo): the lab's small body,
	// the same bytes from every backend.
	KindHosts: {Method: MethodClosed, Path: "/1k", Scheme: SchemeHTTP, Connections: 50, Runs: 3, Duration: Duration(30 * time.Second), Backends: 20},
}

// Resolve fills defaults: the plan's key list (p256), network (loopback)
// and timeout (Parse already decoded the search and pass blocks over their
// defaults); each scenario's name,
// method, path, connections, runs, duration, keys, and its effective search
// and pass settings (plan block with the scenario's overrides on top). It
// fails on an override field that does not exist. Only the first call
// works: later ones return nil, so Scale's changes stay.
func (p *Plan) Resolve() error {
	if p.resolved {
		return nil
	}
	if len(p.Keys) == 0 {
		p.Keys = []string{"p256"}
	}
	if p.Net == "" {
		p.Net = NetLoopback
	}
	if p.Timeout == 0 {
		p.Timeout = Duration(DefaultTimeout)
	}
	if p.Rounds == 0 {
		p.Rounds = 1
	}
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		if err := s.resolve(p); err != nil {
			return fmt.Errorf("plan %s: scenarios[%d] (%s): %v", p.Name, i, s.label(), err)
		}
	}
	p.resolved = true
	return nil
}

// label names a scenario in errors before or after Resolve.
func (s *Scenario) label() string {
	if s.Name != "" {
		return s.Name
	}
	if s.Kind != "" {
		return s.Kind
	}
	return "no kind"
}

func (s *Scenario) resolve(p *Plan) error {
	if s.Name == "" {
		s.Name = s.Kind
	}
	d, ok := kindDefaults[s.Kind]
	if !ok {
		return nil // Validate reports the unknown kind
	}
	if s.Method == "" {
		s.Method = d.Method
	}
	if s.Scheme == "" {
		s.Scheme = d.Scheme
	}
	if s.Backends == 0 {
		s.Backends = d.Backends // 0 elsewhere: one backend, as before (the plan hash unchanged)
	}
	if err := s.resolveTarget(); err != nil {
		return err
	}
	if s.Path == "" {
		s.Path = d.Path
	}
	if s.Connections == 0 {
		s.Connections = d.Connections
	}
	if s.Runs == 0 {
		s.Runs = max(d.Runs, 1)
	}
	if s.Duration == 0 {
		s.Duration = d.Duration
		if s.Duration == 0 {
			s.Duration = Duration(20 * time.Second)
		}
	}
	if s.Method == MethodFixed && len(s.Rates) == 0 && s.RateFrom == nil {
		s.Rates = append([]float64(nil), d.Rates...)
	}
	if len(s.Keys) == 0 {
		if s.Kind == KindHandshake {
			s.Keys = append([]string(nil), p.Keys...)
		} else if len(p.Keys) > 0 {
			s.Keys = []string{p.Keys[0]}
		}
	}
	// The scenario's overrides are decoded over the plan's settings: what
	// they set, to 0 too, wins.
	s.Eff.Search = p.Search
	if err := decodeOver(&s.SearchOver, &s.Eff.Search); err != nil {
		return fmt.Errorf("search: %v", err)
	}
	s.Eff.Pass = p.Pass
	if err := decodeOver(&s.PassOver, &s.Eff.Pass); err != nil {
		return fmt.Errorf("pass: %v", err)
	}
	s.Eff.PacingTolerance = FixedPacingTolerance
	if s.Method == MethodSearch {
		s.Eff.PacingTolerance = SearchPacingTolerance
	}
	if s.PacingTolerance != nil {
		s.Eff.PacingTolerance = *s.PacingTolerance
	}
	s.Eff.Rounds = p.Rounds
	if s.Rounds != nil {
		s.Eff.Rounds = *s.Rounds
	}
	s.Eff.ServerQuota, s.Eff.BackendQuota = p.CPUs.ServerQuota, p.CPUs.BackendQuota
	if s.ServerQuota != nil {
		s.Eff.ServerQuota = *s.ServerQuota
	}
	if s.BackendQuota != nil {
		s.Eff.BackendQuota = *s.BackendQuota
	}
	for k, v := range s.Sysctls {
		s.Sysctls[k] = strings.TrimSpace(v)
	}
	return nil
}

// decodeOver decodes an override block onto dst, whose other fields stay.
// Unknown fields are errors (the node is re-read by a strict decoder).
func decodeOver(n *yaml.Node, dst any) error {
	if n == nil || n.IsZero() {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("must be a mapping of field: value (line %d)", n.Line)
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("%s (near line %d)", oneLine(err), n.Line)
	}
	return nil
}
