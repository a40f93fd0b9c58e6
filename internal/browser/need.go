package browser

import "testing"

// Need returns Chromium's path, or skips the test when it is not on PATH.
func Need(t testing.TB) string {
	t.Helper()
	p, err := Find()
	if err != nil {
		t.Skip(err)
	}
	return p
}
