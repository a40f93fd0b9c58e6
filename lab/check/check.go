// Package check is `loadlab lab check`: it opens one lab session, starts
// each proxy profile in turn under its cgroup against the lab's backend and
// checks it (bodies byte-identical to the backend's per key type and
// protocol, idle memory, a restart), and writes the rows as a table. The
// CLI parses flags and handles signals; everything else is here.
//
// Imports: lab/session, lab/proxy, certs and pin; not gen, and never
// cmd/loadlab, which calls it.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/pin"
)

// Config is what a check run checks and how.
type Config struct {
	Session  session.Options // the lab session the proxies run in
	Profiles []proxy.Profile // in this order
	Idle     Idle            // how idle memory is measured
	Log      io.Writer       // one line per profile ("nginx-stock: ok"); nil = none
}

// Idle is seed 001's idle-memory method, shortened: one request, Quiet,
// then Samples readings Every apart; the median is reported.
type Idle struct {
	Quiet   time.Duration
	Samples int
	Every   time.Duration
}

// Report is the outcome of `loadlab lab check` (its --json).
type Report struct {
	Dir         string          `json:"dir"`
	Net         string          `json:"net"`
	Cgroups     bool            `json:"cgroups"`
	CgroupDirs  []string        `json:"cgroup_dirs,omitempty"`
	ProxyUser   string          `json:"proxy_user"`
	Plan        pin.Plan        `json:"plan"`
	Keys        []certs.KeyType `json:"keys"`
	Rows        []Row           `json:"profiles"`
	Interrupted bool            `json:"interrupted"`
}

// Row is one profile.
type Row struct {
	Profile  string         `json:"profile"`
	Proxy    string         `json:"proxy"`
	Found    bool           `json:"found"`
	Path     string         `json:"path,omitempty"`
	Version  string         `json:"version,omitempty"`
	Install  string         `json:"install,omitempty"` // how to install it, when not found
	Features proxy.Features `json:"features"`

	Role          string `json:"role"`          // proxy or origin (serves the lab's files itself)
	TLS           bool   `json:"tls_verified"`  // HTTPS/1.1 bodies identical with every key type
	HTTP          bool   `json:"http_verified"` // plain HTTP/1.1 bodies identical (the HTTP port) with every key type's run
	H2            bool   `json:"h2_verified"`
	H3            bool   `json:"h3_verified"`
	H3Advertised  bool   `json:"h3_advertised"`      // with every key type, an HTTPS response's Alt-Svc named h3 (profiles that serve HTTP/3)
	ByteIdentical bool   `json:"byte_identical"`     // every check of every key type
	WebSocket     bool   `json:"websocket_verified"` // Upgrade: websocket and Connection: Upgrade reached the backend, which answered 101 and echoed, with every key type (proxies only: an origin has no backend)

	IdleNeed       uint64   `json:"idle_anon_kernel_bytes"`        // what the proxy needs idle: anon + kernel memory (median)
	IdleFile       uint64   `json:"idle_page_cache_bytes"`         // page cache charged to its cgroup (median)
	IdleMemory     uint64   `json:"idle_memory_bytes"`             // memory.current (v1 usage_in_bytes), page cache included (median): the seeds' total
	IdleSamples    []uint64 `json:"idle_memory_samples,omitempty"` // every memory.current reading
	RestartSeconds float64  `json:"restart_s"`
	CertUnchanged  bool     `json:"cert_unchanged"`

	PerKey []KeyRun `json:"per_key"`
	Error  string   `json:"error,omitempty"` // the first failure
}

// KeyRun is one key type's run of a profile.
type KeyRun struct {
	Key           certs.KeyType          `json:"key"`
	Checks        []session.BodyCheck    `json:"checks"`
	WebSocket     session.WebSocketCheck `json:"websocket"`
	ErrorLogLines int                    `json:"error_log_lines"`
	Causes        []session.Cause        `json:"causes,omitempty"`
	Error         string                 `json:"error,omitempty"`
}

// Failed lists the installed profiles that failed a check.
func (r Report) Failed() []string {
	var out []string
	for _, row := range r.Rows {
		if row.Found && row.Error != "" {
			out = append(out, row.Profile)
		}
	}
	return out
}

// Run opens the lab session and checks the profiles one after another; it
// stops early, with the rows so far, when ctx ends.
func Run(ctx context.Context, c Config) (Report, error) {
	if c.Log == nil {
		c.Log = io.Discard
	}
	rep := Report{Net: c.Session.Net, Keys: c.Session.Keys}
	e, err := session.Open(ctx, c.Session)
	if err != nil {
		return rep, err
	}
	defer e.Close()
	rep.Net, rep.Keys = e.Net(), e.Keys()
	rep.Dir, rep.Plan, rep.ProxyUser = e.Dir(), e.Plan(), e.ProxyUser()
	rep.Cgroups, rep.CgroupDirs = e.Cgroups()
	for _, prof := range c.Profiles {
		if ctx.Err() != nil {
			break
		}
		row := checkProfile(ctx, e, c, prof)
		if ctx.Err() != nil && row.Found && row.Error != "" {
			break // cut short by the interrupt: not a result
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, e.Close()
}

// checkProfile checks one profile with every key type; idle memory and the
// restart are measured with the first.
func checkProfile(ctx context.Context, e *session.Session, c Config, prof proxy.Profile) Row {
	row := Row{Profile: prof.Name, Proxy: prof.Proxy, Role: prof.Role, Features: prof.Features}
	found, path, version, err := proxy.Status(prof)
	row.Found, row.Path, row.Version = found, path, version
	if !found {
		row.Install = InstallHint(prof)
		if err != nil && !errors.Is(err, proxy.ErrNotFound) {
			row.Error = err.Error()
		}
		return row
	}
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.TLS, row.HTTP, row.H2, row.H3, row.ByteIdentical, row.WebSocket = true, true, prof.Features.H2, prof.Features.H3, true, !prof.IsOrigin()
	row.H3Advertised = prof.Features.H3
	fail := func(err error) {
		if row.Error == "" {
			row.Error = OneLine(err)
		}
	}
	for i, key := range e.Keys() {
		kr := KeyRun{Key: key}
		err := checkKey(ctx, e, c, prof, key, i == 0, &row, &kr)
		if err != nil {
			kr.Error = OneLine(err)
			fail(err)
		}
		for _, ch := range kr.Checks {
			if ch.OK {
				continue
			}
			row.ByteIdentical = false
			switch ch.Proto {
			case "h2":
				row.H2 = false
			case "h3":
				row.H3 = false
			case "http":
				row.HTTP = false
			default:
				row.TLS = false
			}
		}
		if len(kr.Checks) == 0 {
			row.TLS, row.HTTP, row.H2, row.H3, row.ByteIdentical = false, false, false, false, false
		}
		if !kr.WebSocket.OK && !prof.IsOrigin() {
			row.WebSocket = false
		}
		row.PerKey = append(row.PerKey, kr)
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(c.Log, "%s: interrupted\n", prof.Name)
	case row.Error == "":
		fmt.Fprintf(c.Log, "%s: ok\n", prof.Name)
	default:
		fmt.Fprintf(c.Log, "%s: FAILED: %s\n", prof.Name, row.Error)
	}
	return row
}

// checkKey starts the profile with one key type; with full it measures idle
// memory first; it checks the bodies, with full restarts it, reads the
// error log and stops it.
func checkKey(ctx context.Context, e *session.Session, c Config, prof proxy.Profile, key certs.KeyType, full bool, row *Row, kr *KeyRun) (err error) {
	p, err := e.StartProxy(ctx, prof.Name, key)
	if err != nil {
		return err
	}
	defer func() {
		if serr := p.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	if full {
		// Idle memory first, as seed 001 measured it: a fresh proxy, one
		// request, then quiet (the 1 MiB bodies of the checks would
		// inflate a garbage-collected heap for minutes).
		idle, ierr := p.IdleMemory(ctx, c.Idle.Quiet, c.Idle.Samples, c.Idle.Every)
		if ierr != nil {
			return ierr
		}
		row.IdleNeed, row.IdleFile, row.IdleMemory, row.IdleSamples = idle.Need, idle.File, idle.Total, idle.TotalSamples
	}
	ch, err := p.RunChecks(ctx, full)
	kr.Checks, kr.WebSocket = ch.Bodies, ch.WebSocket
	if ch.Restarted {
		row.RestartSeconds, row.CertUnchanged = ch.RestartS, ch.CertUnchanged
	}
	if prof.Features.H3 && !ch.H3Advertised {
		row.H3Advertised = false
	}
	lines, causes, lerr := p.ErrorCauses()
	kr.ErrorLogLines, kr.Causes = lines, causes
	if err == nil {
		err = lerr
	}
	return err
}

// InstallHint says how to install a profile's proxy.
func InstallHint(prof proxy.Profile) string {
	switch prof.Proxy {
	case "traefik":
		return "scripts/install-proxies.sh --with-traefik"
	case "caddy":
		return "scripts/install-proxies.sh (go install, ~2.5 min)"
	}
	return "scripts/install-proxies.sh (apt-get install " + prof.Proxy + ")"
}

// OneLine flattens a joined error onto one line.
func OneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}
