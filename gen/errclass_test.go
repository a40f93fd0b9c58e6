package gen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
)

// A run against a port where nothing listens fails before it starts with
// one line that names the cause once (it used to end with the errno's
// text again) and still wraps it.
func TestRefusedSaysItOnce(t *testing.T) {
	cfg := Config{URL: fmt.Sprintf("http://127.0.0.1:%d/", testutil.RefusedPort(t)), Duration: time.Second}
	_, err := Run(context.Background(), cfg)
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || strings.Count(err.Error(), "connection refused") != 1 {
		t.Fatalf("err %v: want ECONNREFUSED, named once", err)
	}
}
