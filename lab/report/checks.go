package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab/results"
)

// checksTable is the Checks section: one row per profile (and layout) with
// the checks `lab run` made after its first start (seed 001's table):
// bodies byte-identical per key type and protocol, restart seconds and the
// certificate after it, the WebSocket route, HTTP/3 served and advertised.
func checksTable(f *results.File) (Table, bool) {
	if len(f.Checks) == 0 {
		return Table{}, false
	}
	t := Table{Caption: "Checks", Header: []string{"Profile", "Version", "Layout", "Byte-identical (per key type and protocol)", "Restart", "Certificate after it", "WebSocket", "HTTP/3 served", "HTTP/3 advertised (Alt-Svc)"}}
	type key struct{ layout, profile string }
	var order []key
	by := map[key][]results.ProxyCheck{}
	for _, c := range f.Checks {
		k := key{c.Layout, c.Profile}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], c)
	}
	for _, k := range order {
		cs := by[k]
		version := "-"
		var bodies []string
		restart, cert, ws, h3, adv := "-", "-", "ok", "-", "-"
		for _, c := range cs {
			for _, pi := range f.Proxies { // the version, whatever its routes
				if pi.Layout == c.Layout && pi.Profile == c.Profile && pi.Key == c.Key && pi.Version != "" {
					version = pi.Version
				}
			}
			bodies = append(bodies, keyName(c.Key)+": "+protoWords(c))
			if c.Restarted {
				restart = fmt.Sprintf("%.2f s", c.RestartS)
				cert = map[bool]string{true: "unchanged", false: "CHANGED"}[c.CertUnchanged]
			}
			switch {
			case strings.HasPrefix(c.WebSocket.Error, "not checked"):
				ws = "- (origin)"
			case !c.WebSocket.OK:
				ws = "FAIL: " + c.WebSocket.Error
			}
			if servesH3(c) {
				if h3 != "FAIL" {
					h3 = map[bool]string{true: "yes", false: "FAIL"}[c.H3]
				}
				if adv != "no Alt-Svc naming h3" {
					adv = map[bool]string{true: "yes: " + altSvc(c), false: "no Alt-Svc naming h3"}[c.H3Advertised]
				}
			}
		}
		t.Rows = append(t.Rows, []string{k.profile, version, k.layout, strings.Join(bodies, "; "), restart, cert, ws, h3, adv})
		t.Marks = append(t.Marks, "")
	}
	for _, c := range f.Checks {
		if c.Error != "" {
			t.Footnotes = append(t.Footnotes, fmt.Sprintf("%s (%s): %s", c.Profile, keyName(c.Key), c.Error))
		}
	}
	t.Footnotes = append(t.Footnotes, "Checks: right after each profile's first start with a key type (after its idle memory), /1k and /1m fetched through it over every protocol it serves, compared by SHA-256 with the backend's bodies; GET /ws with Upgrade: websocket through it (the backend answers 101 and echoes); where it serves HTTP/3, the Alt-Svc header of its HTTPS responses; once per profile a restart, timed until it answers again, and the certificate it serves before and after.")
	return t, true
}

// protoWords says per protocol whether both bodies were identical: "h1 ok,
// h2 ok, h3 DIFFER".
func protoWords(c results.ProxyCheck) string {
	var protos []string
	ok := map[string]bool{}
	for _, b := range c.Bodies {
		if _, seen := ok[b.Proto]; !seen {
			protos = append(protos, b.Proto)
			ok[b.Proto] = true
		}
		ok[b.Proto] = ok[b.Proto] && b.OK
	}
	if len(protos) == 0 {
		return "not checked"
	}
	var parts []string
	for _, p := range protos {
		parts = append(parts, p+" "+map[bool]string{true: "ok", false: "DIFFER"}[ok[p]])
	}
	return strings.Join(parts, ", ")
}

// servesH3 reports whether the checks fetched over HTTP/3.
func servesH3(c results.ProxyCheck) bool {
	for _, b := range c.Bodies {
		if b.Proto == "h3" {
			return true
		}
	}
	return false
}

// altSvc is the first Alt-Svc header of the HTTPS responses.
func altSvc(c results.ProxyCheck) string {
	for _, b := range c.Bodies {
		if b.AltSvc != "" && b.Proto != "h3" {
			return b.AltSvc
		}
	}
	return ""
}
