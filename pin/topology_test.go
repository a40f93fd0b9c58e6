package pin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTopologyFromSMT(t *testing.T) {
	topo := fakeTopo(t, 8, 2)
	if len(topo.CPUs) != 16 || !topo.SMT() || len(topo.Warnings) != 0 {
		t.Fatalf("got %d CPUs, smt %v, warnings %v", len(topo.CPUs), topo.SMT(), topo.Warnings)
	}
	c, ok := topo.CPU(9)
	if !ok || c.Core != 1 || c.Package != 0 || c.Siblings.String() != "1,9" {
		t.Fatalf("cpu9 = %+v", c)
	}
	cores := topo.Cores(topo.Online())
	if len(cores) != 8 || cores[0].String() != "0,8" || cores[7].String() != "7,15" {
		t.Fatalf("cores = %v", cores)
	}
	if got := topo.Cores(CPUSet{0, 1, 9}); len(got) != 2 || got[0].String() != "0" || got[1].String() != "1,9" {
		t.Fatalf("cores within 0,1,9 = %v", got)
	}
}

func TestReadTopologyFromNoSMT(t *testing.T) {
	topo := fakeTopo(t, 2, 1)
	if topo.SMT() || topo.Online().String() != "0-1" {
		t.Fatalf("topology = %+v", topo)
	}
	for _, c := range topo.CPUs {
		if c.Core != c.ID || !c.Siblings.Equal(CPUSet{c.ID}) {
			t.Errorf("cpu %+v", c)
		}
	}
}

func TestReadTopologyOfflineSibling(t *testing.T) {
	root := fakeSys(t, 2, 2) // CPUs 0-3, siblings 0/2 and 1/3
	write(t, filepath.Join(root, "online"), "0-2\n")
	topo, err := ReadTopologyFrom(root)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := topo.CPU(1); c.Siblings.String() != "1" {
		t.Fatalf("offline sibling kept: %+v", c)
	}
}

func TestReadTopologyMissingFiles(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "online"), "0-1\n")
	topo, err := ReadTopologyFrom(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.CPUs) != 2 || len(topo.Warnings) != 2 || topo.CPUs[1].Core != 1 {
		t.Fatalf("topology = %+v", topo)
	}
	if _, err := ReadTopologyFrom(t.TempDir()); err == nil || !strings.Contains(err.Error(), "online") {
		t.Fatalf("missing online file: err = %v", err)
	}
	write(t, filepath.Join(root, "cpu0", "topology", "core_id"), "x\n")
	if _, err := ReadTopologyFrom(root); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Fatalf("bad core_id: err = %v", err)
	}
}

func TestReadTopologyReal(t *testing.T) {
	topo, err := ReadTopology()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skip("no /sys here")
	}
	want, err := ParseList(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !topo.Online().Equal(want) {
		t.Fatalf("online %v, sysfs says %v", topo.Online(), want)
	}
	for _, c := range topo.CPUs {
		if !c.Siblings.Contains(c.ID) {
			t.Errorf("cpu %d not among its own siblings %v", c.ID, c.Siblings)
		}
	}
}
