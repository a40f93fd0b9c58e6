package cleanup

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/netns"
)

func TestRemoveLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if v, err := cgroup.Detect(); err != nil || v != cgroup.V1 {
		t.Skip("host cgroups are not v1")
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := c.Process.Pid
	// A crashed run with pid `dead`: its cgroups, a group inside with a
	// process, a namespace and a bridge.
	// Its own names (cgroup prefix loadlabc, network prefix llc; the other
	// sweep tests, in packages run beside this one, each have theirs): lab
	// runs beside this test (lab/session's) sweep dead runs' loadlab-<pid>
	// and ll<pid>-... objects too, and would take the ones planted here.
	const cgPrefix, netPrefix = "loadlabc", "llc"
	m, err := cgroup.NewManagerWith(cgroup.Options{Pid: dead, Prefix: cgPrefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	if _, err := m.Create("proxy", cgroup.Limits{}); err != nil {
		t.Fatal(err)
	}
	ns, br := fmt.Sprintf("%s%d-0-proxy", netPrefix, dead), fmt.Sprintf("%sbr%d-0", netPrefix, dead)
	for _, args := range [][]string{{"netns", "add", ns}, {"link", "add", br, "type", "bridge"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", ns).Run()
		_ = exec.Command("ip", "link", "del", br).Run()
	})
	// RemoveLeftovers with the test's cgroup prefix.
	removed, err := leftovers(true, netPrefix, func(string) ([]string, error) {
		return cgroup.RemoveStaleWith(cgroup.Options{Prefix: cgPrefix})
	}, netns.RemoveStale)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(removed, " ")
	for _, want := range append(m.RunDirs(), ns, br) {
		if !strings.Contains(got, want) {
			t.Errorf("%s not removed (removed: %s)", want, got)
		}
		if _, err := os.Stat(want); err == nil && strings.HasPrefix(want, "/") {
			t.Errorf("%s still exists", want)
		}
	}
	out, _ := exec.Command("sh", "-c", "ip netns list; ip link").CombinedOutput()
	if strings.Contains(string(out), ns) || strings.Contains(string(out), br) {
		t.Errorf("network leftovers still there:\n%s", out)
	}
}
