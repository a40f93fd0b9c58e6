// Package plan reads, validates and narrows lab plans: YAML files that name
// the proxy profiles, key types, scenarios, CPU groups, memory limit, network
// mode, durations and pass criteria of one `loadlab lab run`.
//
// Three plans are built in (see Builtin): quick (the `make lab` default),
// seed-2026 (the method of seed 002, "Reverse Proxy Benchmark 2026") and
// sumguy (seed 003, "nginx vs Caddy on 2 cores"). `loadlab lab plan show
// NAME` prints one so users can copy and edit it.
//
// A plan's `search` and `pass` blocks are defaults; a scenario may override
// any of their fields in its own `search:` / `pass:` block. Resolve fills
// every scenario's effective values (Scenario.Eff) from the plan's blocks,
// the kind's defaults and the overrides.
//
// Imports: gen, certs, pin, internal/ and lab/cgroup, lab/netns and
// lab/proxy, for the values it checks; it starts nothing and must not import
// lab/session, lab/scenario, lab/results or cmd.
package plan
