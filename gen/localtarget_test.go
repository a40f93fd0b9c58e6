package gen

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/internal/testutil"
)

// threadNS is a network namespace of its own for one locked OS thread:
// do runs f on that thread; the namespace goes when the test ends (the
// thread exits without being unlocked).
type threadNS struct {
	path string
	run  chan func()
}

func newThreadNS(t *testing.T) *threadNS {
	t.Helper()
	n := &threadNS{run: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread and its namespace end with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ready <- err
			return
		}
		n.path = fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		ready <- nil
		for f := range n.run {
			f()
		}
	}()
	if err := <-ready; err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() { close(n.run) })
	return n
}

// do runs f on the namespace's thread and fails the test on its error.
func (n *threadNS) do(t *testing.T, f func() error) {
	t.Helper()
	errc := make(chan error)
	n.run <- func() { errc <- f() }
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// The local-target check on real namespaces (root): the generator's
// namespace has a bridge whose port is a veth into a second namespace,
// which serves HTTP at 10.77.0.5: loaded. With a tap device enslaved to
// the bridge too (a VM's port, not a veth into this host's namespaces, as
// a physical NIC is not), the same target is refused before anything is
// sent. The old check accepted any bridge.
func TestLocalTargetBridgePorts(t *testing.T) {
	testutil.NeedRoot(t)
	gen, srv := newThreadNS(t), newThreadNS(t)
	var port int
	srv.do(t, func() error { return netlink.LinkSetUp(mustLink("lo")) })
	gen.do(t, func() error {
		for _, l := range []netlink.Link{
			&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}},
			&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "va"}, PeerName: "vb"},
		} {
			if err := netlink.LinkAdd(l); err != nil {
				return err
			}
		}
		br, va, vb := mustLink("br0"), mustLink("va"), mustLink("vb")
		f, err := os.Open(srv.path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := netlink.LinkSetNsFd(vb, int(f.Fd())); err != nil {
			return err
		}
		if err := netlink.LinkSetMaster(va, br); err != nil {
			return err
		}
		addr, _ := netlink.ParseAddr("10.77.0.1/24")
		if err := netlink.AddrAdd(br, addr); err != nil {
			return err
		}
		for _, l := range []netlink.Link{br, va, mustLink("lo")} {
			if err := netlink.LinkSetUp(l); err != nil {
				return err
			}
		}
		return nil
	})
	srv.do(t, func() error {
		vb := mustLink("vb")
		addr, _ := netlink.ParseAddr("10.77.0.5/24")
		if err := netlink.AddrAdd(vb, addr); err != nil {
			return err
		}
		if err := netlink.LinkSetUp(vb); err != nil {
			return err
		}
		ln, err := net.Listen("tcp4", "10.77.0.5:0")
		if err != nil {
			return err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close() })
		return nil
	})
	gen.do(t, func() error { // the veth's other end is found in the server's namespace
		v := run.NewHostView()
		defer v.Close()
		p, _, err := v.Peer(mustLink("va"))
		if err == nil && (p == nil || p.Attrs().Name != "vb") {
			err = fmt.Errorf("the other end of va: %v, want vb", p)
		}
		return err
	})
	cfg := Config{URL: fmt.Sprintf("http://10.77.0.5:%d/", port), NetNS: gen.path, Connections: 1,
		Duration: 500 * time.Millisecond, Timeout: 2 * time.Second}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.OK == 0 {
		t.Fatalf("a bridge of veths into this host's namespaces: %v (ok %v)", err, res != nil && res.OK > 0)
	}
	gen.do(t, func() error {
		if err := netlink.LinkAdd(&netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: "t0"}, Mode: netlink.TUNTAP_MODE_TAP}); err != nil {
			return err
		}
		return netlink.LinkSetMaster(mustLink("t0"), mustLink("br0"))
	})
	_, err = Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "t0") || !strings.Contains(err.Error(), "off this machine") {
		t.Fatalf("the bridge with t0 enslaved: %v, want a refusal naming t0", err)
	}
}

// mustLink is the link named name in the calling thread's namespace.
func mustLink(name string) netlink.Link {
	l, err := netlink.LinkByName(name)
	if err != nil {
		panic(err)
	}
	return l
}
