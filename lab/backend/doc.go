// Package backend is the lab's built-in origin server: a fasthttp HTTP/1.1
// server (plain or TLS 1.2/1.3), optionally also HTTP/2 on the same TCP
// port (x/net's server: ALPN h2 over TLS, h2c with prior knowledge in plain
// text) and HTTP/3 on the same port number over UDP, that answers fixed,
// precomputed bodies fast enough never to be the bottleneck behind a
// reverse proxy.
//
// # Endpoints
//
//	/1k            1024-byte JSON body (application/json), same bytes every time
//	/100k          102,400 bytes (application/octet-stream), repeating 64-byte lines
//	/1m            1,048,576 bytes (application/octet-stream), same pattern
//	/echo          text/plain: "METHOD URI PROTO", "RemoteAddr: ADDR", then
//	               every request header as "Name: value", one per line
//	/status/NNN    answers status NNN (200-599) with body "NNN Reason\n"
//	/chunked       the /1k body sent with Transfer-Encoding: chunked, in four
//	               256-byte chunks (over HTTP/2 and HTTP/3: four DATA
//	               writes, no length)
//	/close         the /1k body with Connection: close; over HTTP/2 the
//	               body, then GOAWAY and a close once idle; over HTTP/3,
//	               where Connection is not allowed, plain /1k
//	/delay/D       sleeps D (a Go duration such as 50ms, or a bare integer in
//	               milliseconds), capped at 10s, then answers the /1k body
//	/_stats        {"accepted": n, "open": n, "requests": n}: TCP connections
//	               accepted since start, TCP connections open now, requests
//	               served (all protocols). /_stats itself is not counted in
//	               requests and never stalls; its own connection is counted.
//	               With named backends also "apps": [n, ...], each one's
//	               requests.
//
// # Named backends
//
// With Config.Apps the one process is N backends, one listener each,
// named app01, app02, ... in order (seed 001's twenty whoami containers
// behind one proxy, routed by Host): each serves the endpoints above over
// plain HTTP/1.1 and names itself in every response's X-Loadlab-Backend
// header, so a test or a proxy's route can be proved by what answered.
//
// Any other path answers 404. Bad /status or /delay arguments answer 400.
// Every method is accepted; HEAD answers headers only.
//
// # Stall injection
//
// With StallEvery = E > 0 and StallFor = F (0 < F < E), stall windows are
// [start+k*E, start+k*E+F) for k = 1, 2, ..., where start is the moment
// Start began listening (Server.StartedAt). There is no window at k = 0, so a
// fresh server answers at once. Like a stop-the-world pause, a request that
// arrives inside a window is held until the window ends, then answered; a
// /delay request also waits out any window open when its sleep ends, so no
// response is produced inside a window. /_stats is exempt. Closing the
// server releases held requests early.
//
// Imports: only internal/fields among loadlab's packages; no other lab
// package, not gen, not cmd (lab/proxy and lab/session build on it).
package backend
