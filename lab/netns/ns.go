package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// runDir is where named namespaces live, as with `ip netns add`.
const runDir = "/var/run/netns"

// createNamed makes a new network namespace and pins it with a bind mount at
// runDir/name, so `ip netns exec name` works and processes can join it by
// path. The calling goroutine's thread is not touched.
func createNamed(name string) (netns.NsHandle, error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return netns.None(), fmt.Errorf("cannot create %s: %v; run as root", runDir, err)
	}
	path := filepath.Join(runDir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return netns.None(), fmt.Errorf("cannot create network namespace %s: %v", name, err)
	}
	f.Close()
	var h netns.NsHandle
	err = onFreshThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("cannot create network namespace %s: %v; run as root", name, err)
		}
		if err := unix.Mount("/proc/thread-self/ns/net", path, "none", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("cannot pin network namespace at %s: %v", path, err)
		}
		var err error
		h, err = netns.GetFromPath(path)
		return err
	})
	if err != nil {
		_ = unix.Unmount(path, unix.MNT_DETACH)
		_ = os.Remove(path)
		return netns.None(), err
	}
	return h, nil
}

// deleteNamed unpins a named namespace; it disappears once no process or
// socket uses it. A missing name is not an error.
func deleteNamed(name string) error {
	path := filepath.Join(runDir, name)
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		return fmt.Errorf("cannot unmount network namespace %s: %v", path, err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// onFreshThread runs fn on a goroutine locked to its own OS thread and
// restores the thread's network namespace afterwards. If that restore fails
// the goroutine exits still locked, so the Go runtime throws the thread
// away instead of reusing it in the wrong namespace.
func onFreshThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("cannot read this thread's network namespace: %v", err)
			return
		}
		defer orig.Close()
		ferr := fn()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}

// inNS runs fn on a thread inside namespace h (see onFreshThread).
func inNS(h netns.NsHandle, fn func() error) error {
	return onFreshThread(func() error {
		if err := netns.Set(h); err != nil {
			return fmt.Errorf("cannot enter network namespace: %v", err)
		}
		return fn()
	})
}
