package loopback

import (
	"errors"
	"net"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"127.1.2.3:0", false, true},
		{"[::1]:8080", false, true},
		{"localhost:8080", false, true},
		{":8080", false, false},
		{"0.0.0.0:8080", false, false},
		{"192.0.2.1:8080", false, false},
		{"192.0.2.1:8080", true, true},
		{"[::]:8080", true, true},
	} {
		err := Check("--serve", "--allow-remote", c.addr, c.remote)
		if (err == nil) != c.ok {
			t.Errorf("Check(%q, remote %v): %v, want ok %v", c.addr, c.remote, err, c.ok)
		}
		if err != nil && (!errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "--allow-remote")) {
			t.Errorf("Check(%q): %v: want ErrRemote and the way out", c.addr, err)
		}
	}
	if err := Check("--serve", "--allow-remote", "8080", false); err == nil || errors.Is(err, ErrRemote) {
		t.Errorf("no host: %v, want a HOST:PORT error", err)
	}
}

// A port in use is a one-line error naming the flag.
func TestListenPortInUse(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = Listen("--serve", "--allow-remote", held.Addr().String(), false)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--serve "+held.Addr().String()) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Listen on a held port: %v", err)
	}
	ln, err := Listen("--serve", "--allow-remote", "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}
