package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab/backend"
)

// BodyCheck is one fetch of a path through a proxy, compared with what the
// backend serves.
type BodyCheck struct {
	Proto  string `json:"proto"` // "h1" (HTTP/1.1 over TLS), "h2", "h3" or "http" (plain HTTP/1.1)
	Path   string `json:"path"`  // "/1k" or "/1m"
	Status int    `json:"status"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256,omitempty"`  // of the body received (hex)
	OK     bool   `json:"ok"`                // status 200 and sha256 equal to the backend's (a fixed-body origin's: its body)
	Error  string `json:"error,omitempty"`   // why the fetch failed or differs
	AltSvc string `json:"alt_svc,omitempty"` // the response's Alt-Svc header: where the proxy advertises HTTP/3
}

// Key is the name CheckBodies uses for the check: "/1k" for HTTP/1.1 over
// TLS, "h2 /1k", "h3 /1k" and "http /1k" for the others.
func (c BodyCheck) Key() string {
	if c.Proto == protoH1 {
		return c.Path
	}
	return c.Proto + " " + c.Path
}

// CheckBodies fetches /1k and /1m through the proxy over HTTPS (HTTP/1.1,
// Host and SNI = the server name, chain verified against the lab CA), then
// over h2 and HTTP/3 when the profile serves them, then over plain HTTP on
// its HTTP port, and compares each body's sha256 with the backend's (an
// origin serves the same bytes as files; a fixed-body origin must answer
// its FixedBody). Keys are "/1k", "/1m", "h2 /1k", "h2 /1m", "h3 /1k",
// "h3 /1m", "http /1k", "http /1m"; true means byte-identical with status
// 200. The error names the first check that failed (nil when all passed).
func (p *Proxy) CheckBodies(ctx context.Context) (map[string]bool, error) {
	checks, err := p.CheckBodiesDetail(ctx)
	out := map[string]bool{}
	for _, c := range checks {
		out[c.Key()] = c.OK
	}
	return out, err
}

// CheckBodiesDetail is CheckBodies with the status, size and hash of every
// fetch.
func (p *Proxy) CheckBodiesDetail(ctx context.Context) ([]BodyCheck, error) {
	var protos []string
	if p.prof.Features.TLS {
		protos = append(protos, protoH1)
		if p.prof.Features.H2 {
			protos = append(protos, protoH2)
		}
		if p.prof.Features.H3 {
			protos = append(protos, protoH3)
		}
	}
	if p.servesPlain() {
		protos = append(protos, protoHTTP)
	}
	var checks []BodyCheck
	var first error
	for _, proto := range protos {
		cs, err := p.checkProto(ctx, proto)
		checks = append(checks, cs...)
		if err != nil && first == nil {
			first = err
		}
		if ctx.Err() != nil {
			return checks, ctx.Err()
		}
	}
	return checks, first
}

// checkProto runs the checks of one protocol over one client.
func (p *Proxy) checkProto(ctx context.Context, proto string) ([]BodyCheck, error) {
	var (
		checks []BodyCheck
		first  error
	)
	fail := func(path, msg string) {
		checks = append(checks, BodyCheck{Proto: proto, Path: path, Error: msg})
		if first == nil {
			first = fmt.Errorf("%s %s through %s: %s", proto, path, p.prof.Name, msg)
		}
	}
	var closeFn func()
	scheme := SchemeHTTPS
	if proto == protoHTTP {
		scheme = SchemeHTTP
	}
	c := p.clientFor(scheme, proto)
	if proto == protoH3 {
		var err error
		if c, closeFn, err = p.e.h3Client(p.addr.String()); err != nil {
			for _, path := range checkPaths {
				fail(path, err.Error())
			}
			return checks, first
		}
		defer closeFn()
	} else {
		defer c.CloseIdleConnections()
	}
	wantMajor := map[string]string{protoH1: "HTTP/1.1", protoH2: "HTTP/2.0", protoH3: "HTTP/3.0", protoHTTP: "HTTP/1.1"}[proto]
	for _, path := range checkPaths {
		status, got, hdr, body, err := fetchHeader(ctx, c, p.schemeURL(scheme, path))
		if err != nil {
			fail(path, err.Error())
			continue
		}
		sum := sha256.Sum256(body)
		bc := BodyCheck{Proto: proto, Path: path, Status: status, Bytes: len(body), SHA256: hex.EncodeToString(sum[:]), AltSvc: hdr.Get("Alt-Svc")}
		want, wantLen := p.e.backend.sums[path], len(backend.Body(path))
		if fixed := p.prof.FixedBody; fixed != nil {
			want, wantLen = sha256.Sum256(fixed), len(fixed)
		}
		switch {
		case status != 200:
			bc.Error = fmt.Sprintf("status %d", status)
		case got != wantMajor:
			bc.Error = fmt.Sprintf("answered over %s, want %s", got, wantMajor)
		case sum != want:
			bc.Error = fmt.Sprintf("%d bytes with sha256 %.12s..., the backend's %d bytes have %.12s...", len(body), bc.SHA256, wantLen, hex.EncodeToString(want[:]))
		default:
			bc.OK = true
		}
		checks = append(checks, bc)
		if !bc.OK && first == nil {
			first = errors.New(proto + " " + path + " through " + p.prof.Name + ": " + bc.Error)
		}
	}
	return checks, first
}

// AdvertisesH3 reports whether an HTTPS (HTTP/1.1 or h2) response of the
// checks carried an Alt-Svc header naming h3: how a client learns that the
// proxy serves HTTP/3 (RFC 9114 section 3.1.1).
func AdvertisesH3(checks []BodyCheck) bool {
	for _, c := range checks {
		if c.Proto != protoH1 && c.Proto != protoH2 {
			continue
		}
		for _, alt := range strings.Split(c.AltSvc, ",") {
			if proto, _, ok := strings.Cut(strings.TrimSpace(alt), "="); ok && proto == "h3" {
				return true
			}
		}
	}
	return false
}

// Checks is one run of the checks through a running proxy (seed 001's
// table): bodies byte-identical to the backend's per protocol, the
// WebSocket route, HTTP/3 advertised (Alt-Svc) where the profile serves
// it, and, when asked, a restart: seconds until it answers again and
// whether the certificate it serves is unchanged.
type Checks struct {
	Bodies        []BodyCheck    `json:"bodies"`
	ByteIdentical bool           `json:"byte_identical"` // every body check passed
	WebSocket     WebSocketCheck `json:"websocket"`
	H3            bool           `json:"h3_served"`     // the profile serves HTTP/3 and its h3 bodies were identical
	H3Advertised  bool           `json:"h3_advertised"` // an HTTPS response's Alt-Svc names h3
	Restarted     bool           `json:"restarted"`     // the restart ran
	RestartS      float64        `json:"restart_s,omitempty"`
	CertUnchanged bool           `json:"cert_unchanged"`  // the same leaf before and after the restart
	Error         string         `json:"error,omitempty"` // the first failure
}

// RunChecks runs the checks through p (with restart and no failure so
// far, also a restart) and returns them; the error is the first failure.
// A profile that serves HTTP/3 must also advertise it; an origin has no
// WebSocket route.
func (p *Proxy) RunChecks(ctx context.Context, restart bool) (Checks, error) {
	var c Checks
	bodies, err := p.CheckBodiesDetail(ctx)
	c.Bodies, c.ByteIdentical = bodies, err == nil && len(bodies) > 0
	if p.prof.Features.H3 {
		c.H3 = true
		for _, b := range bodies {
			if b.Proto == protoH3 && !b.OK {
				c.H3 = false
			}
		}
		if c.H3Advertised = AdvertisesH3(bodies); !c.H3Advertised && err == nil {
			err = fmt.Errorf("%s serves HTTP/3 but no HTTPS response advertised it (no Alt-Svc naming h3)", p.prof.Name)
		}
	}
	if p.prof.IsOrigin() {
		c.WebSocket = WebSocketCheck{Error: "not checked: an origin serves files, it has no backend to upgrade to"}
	} else if c.WebSocket = p.CheckWebSocket(ctx); !c.WebSocket.OK && err == nil {
		err = fmt.Errorf("websocket route through %s: %s", p.prof.Name, c.WebSocket.Error)
	}
	if restart && err == nil && ctx.Err() == nil {
		secs, same, rerr := p.Restart(ctx)
		c.Restarted, c.RestartS, c.CertUnchanged = rerr == nil, secs, same
		switch {
		case rerr != nil:
			err = rerr
		case !same:
			err = fmt.Errorf("%s served a different certificate after the restart", p.prof.Name)
		}
	}
	if err != nil {
		c.Error = err.Error()
	}
	return c, err
}
