package results

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
