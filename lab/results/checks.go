package results

import "github.com/loadlab/loadlab/lab/session"

// ProxyCheck is one run of the checks (session.Checks: bodies per
// protocol, the WebSocket route, HTTP/3 served and advertised, a restart)
// through one proxy profile with one key type on one layout, made by `lab
// run` right after the profile's first start there (after its idle memory);
// the restart runs once per profile and layout.
type ProxyCheck struct {
	Layout  string `json:"layout"`
	Profile string `json:"profile"`
	Proxy   string `json:"proxy"`
	Key     string `json:"key"`
	session.Checks
}

// Check returns the recorded checks of profile with key on layout, or nil.
func (f *File) Check(layout, profile, key string) *ProxyCheck {
	for i := range f.Checks {
		if c := &f.Checks[i]; c.Layout == layout && c.Profile == profile && c.Key == key {
			return c
		}
	}
	return nil
}

// Restarted reports whether the checks of profile on layout restarted it
// already (with any key type).
func (f *File) Restarted(layout, profile string) bool {
	for _, c := range f.Checks {
		if c.Layout == layout && c.Profile == profile && c.Restarted {
			return true
		}
	}
	return false
}
