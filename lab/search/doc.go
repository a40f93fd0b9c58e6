// Package search finds a proxy's maximum sustainable rate the way seed 002
// did, with every number configurable (Config):
//
//   - Probe: start at Start and multiply by Growth (2 = doubling) until a
//     step fails or Max passes.
//   - Bisect between the last pass and the first failure until the gap is
//     at most Precision (8%) of the last pass.
//   - Confirm: the rate found must pass ConfirmRuns (3) times in a row; if
//     one fails, lower it by StepDown (8%) and confirm again, at most
//     MaxStepDowns times.
//   - Cool down: after every step that did not pass, the CooldownFunc runs
//     (the lab waits until TIME_WAIT has drained, up to a cap).
//
// Steps run through a StepFunc, so the search is pure logic, tested with a
// fake. Judge turns one generator result into a step verdict with the pass
// criteria (p95, p99, error share, share of the offered rate delivered).
//
// # Generator-limited steps
//
// A step that fails on latency or on the delivered rate while the
// generator reports itself as the bottleneck (gen.Result.Generator.
// Bottleneck) gets the verdict GenLimited, not Fail: a late generator
// inflates latency and sends less, so the proxy was not shown to fail.
// Errors (failed or non-2xx responses) and a window without any response
// stay the proxy's failures whatever the generator says. The search treats it as the
// ceiling of what this machine can measure: it bounds the search from
// above exactly like a failure (probing stops, bisection narrows below
// it), but the result is flagged GeneratorLimited, meaning the rate found
// is a lower bound on the proxy's capacity and the report keeps the row
// out of rankings. A later proxy failure below that bound clears the flag
// (the proxy's own limit was found after all). A generator-limited
// confirmation step counts as a failed confirmation (the rate steps down)
// and also sets the flag. A step that passes while the generator was busy
// counts as a pass: the proxy met the criteria under that load.
//
// Imports: only gen and internal/units among loadlab's packages; no other
// lab package, not cmd.
package search
