// Package metrics serves a generator run, a lab run and the backend to
// Prometheus while they go: Gen, a run observer (gen.Observer), turns a
// run's per-second result.Live into metrics, Server serves a registry at
// /metrics. It reads gen/result's types and imports neither gen, lab nor
// cmd; gen does not import it. The metric names and what they mean are
// listed in the README's "Watching a run".
package metrics
