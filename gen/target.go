package gen

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/gen/internal/run"
)

// Target is a parsed request URL (ParseTarget): URL as given, Scheme
// "http" or "https", Host (a name or an IP, without brackets or port),
// Port, Path (path and query, "/" at least) and HostHeader, the Host
// header value (the host, plus the port when it is not the scheme's
// default).
type Target = run.Target

// ParseTarget parses and checks an http:// or https:// URL.
func ParseTarget(raw string) (Target, error) {
	if raw == "" {
		return Target{}, usage("missing URL: give one like http://127.0.0.1:8080/1k")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, usage("bad URL %q: %v", raw, unwrapURLError(err))
	}
	t := Target{URL: raw, Scheme: strings.ToLower(u.Scheme)}
	switch t.Scheme {
	case "http":
		t.Port = 80
	case "https":
		t.Port = 443
	case "":
		return Target{}, usage("URL %q has no scheme: use http://%s or https://%s", raw, raw, raw)
	default:
		return Target{}, usage("unsupported URL scheme %q in %q: use http:// or https://", u.Scheme, raw)
	}
	t.Host = u.Hostname()
	if t.Host == "" {
		return Target{}, usage("URL %q has no host", raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, usage("bad port %q in %q: use 1-65535", p, raw)
		}
		t.Port = n
	}
	if u.User != nil {
		return Target{}, usage("URL %q carries user info; send credentials in an Authorization header ({Headers}) instead", raw)
	}
	t.Path = u.EscapedPath()
	if t.Path == "" {
		t.Path = "/"
	}
	if u.RawQuery != "" {
		t.Path += "?" + u.RawQuery
	}
	t.HostHeader = u.Host
	if u.Port() != "" && ((t.Scheme == "http" && t.Port == 80) || (t.Scheme == "https" && t.Port == 443)) {
		t.HostHeader = strings.TrimSuffix(u.Host, ":"+u.Port())
	}
	return t, nil
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
