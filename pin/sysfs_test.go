package pin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fakeSys writes a fake /sys/devices/system/cpu tree with cores physical
// cores of smt threads each in one package, numbered the way Intel does:
// thread k of core c is CPU c + k*cores. It returns the root.
func fakeSys(t *testing.T, cores, smt int) string {
	t.Helper()
	root := t.TempDir()
	n := cores * smt
	write(t, filepath.Join(root, "online"), fmt.Sprintf("0-%d\n", n-1))
	if n == 1 {
		write(t, filepath.Join(root, "online"), "0\n")
	}
	for cpu := range n {
		core := cpu % cores
		var sib CPUSet
		for k := range smt {
			sib = append(sib, core+k*cores)
		}
		dir := filepath.Join(root, fmt.Sprintf("cpu%d", cpu), "topology")
		write(t, filepath.Join(dir, "core_id"), fmt.Sprintf("%d\n", core))
		write(t, filepath.Join(dir, "physical_package_id"), "0\n")
		write(t, filepath.Join(dir, "thread_siblings_list"), sib.String()+"\n")
	}
	return root
}

// write creates path (and its directories) holding s.
func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeTopo reads a fakeSys tree.
func fakeTopo(t *testing.T, cores, smt int) *Topology {
	t.Helper()
	topo, err := ReadTopologyFrom(fakeSys(t, cores, smt))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}
