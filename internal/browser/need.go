package browser

import (
	"errors"
	"testing"
)

// Need returns Chromium's path, or skips the test when it is not
// installed (and fails it when the one found may not run).
func Need(t testing.TB) string {
	t.Helper()
	p, err := Find()
	if errors.Is(err, ErrNoBrowser) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}
