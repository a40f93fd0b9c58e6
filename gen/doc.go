// Package gen is loadlab's load generator: open-loop pacing from intended
// send times and HdrHistogram recording of corrected and uncorrected
// latency, for HTTP/1.1 and HTTP/2 (plain or TLS: crypto/tls, uTLS presets
// or its own lean TLS 1.3 handshake) and HTTP/3 (its own lean QUIC client,
// or quic-go's).
//
// This package is the generator's public face: Config (what a run asks
// for), Prepare (the Config checked and parsed once into a Prepared that
// nothing changes afterwards), Run and the Observer interface (what
// watches a run each second and at its end: the CLI's progress line and
// HdrHistogram log, the metrics endpoint, the lab's step observers), the
// Parse* functions of the CLI's words, and the table of engines
// (engines.go). Usage errors (usage.go) name Config fields. A run's result
// is a result.Result (package gen/result: the result model, its text and
// JSON, thresholds, and the exact merging of the shards of one run).
//
// What runs is below it, in gen/internal: the run core (run: the
// lifecycle, schedule, pacer, recorder, aggregation, result assembly and
// self-check, and the Engine and Driver seams), the TCP loop (tcploop:
// pinned threads on raw non-blocking sockets, epoll or io_uring as
// Config.IO says), and one package per engine (engine/h1, engine/h2,
// engine/h3lean, engine/h3std). Every engine's steady state allocates
// nothing per request on the paths the allocation tests cover
// (alloc_test.go: HTTP/1.1 closed, open and paced loops, targets, large
// bodies, TLS keep-alive, with observers; HTTP/2; h3lean_alloc_test.go:
// HTTP/3 keep-alive on the lean client, and a new connection per request
// allocating what a bare QUIC connection does). HTTP/3 on quic-go
// (TLS.Engine std) allocates what quic-go and its http3 do.
//
// Imports: gen/result, its own internal packages, pin, internal/ and certs
// among loadlab's packages; never lab, cmd, k8s or image. Nothing under
// gen/internal imports gen.
package gen
