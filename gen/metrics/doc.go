// Package metrics serves a generator run, a lab run and the backend to
// Prometheus while they go: Gen turns a run's per-second gen.Live into
// metrics, Server serves a registry at /metrics. It reads gen's types and
// imports neither lab nor cmd; gen does not import it (a run only calls
// its Config.Live). The metric names and what they mean are listed in the
// README's "Watching a run".
package metrics
