package listen

import (
	"strings"
	"testing"
)

func TestLocalRefusesRemote(t *testing.T) {
	for _, a := range []string{"0.0.0.0:0", ":0", "10.1.2.3:9464", "[::]:0"} {
		if ln, err := Local(a, "--metrics-addr", false); err == nil {
			ln.Close()
			t.Errorf("%s: served without --allow-remote", a)
		} else if !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("%s: %v: the error should say what to do", a, err)
		}
	}
	ln, err := Local("0.0.0.0:0", "--metrics-addr", true)
	if err != nil {
		t.Fatalf("with allowRemote: %v", err)
	}
	ln.Close()
}

func TestLocalPortInUse(t *testing.T) {
	ln, err := Local("127.0.0.1:0", "--metrics-addr", false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Local(ln.Addr().String(), "--metrics-addr", false)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a port in use: %v, want one line saying it is in use", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1": true, "127.9.9.9": true, "::1": true, "localhost": true, "::ffff:127.0.0.1": true,
		"": false, "0.0.0.0": false, "192.168.1.1": false, "example.com": false} {
		if got := IsLoopback(h); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", h, got, want)
		}
	}
}
