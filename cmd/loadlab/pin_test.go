package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/pin"
)

func TestPinText(t *testing.T) {
	code, out := pincertsRun(t, "pin")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"Topology:", "CPU  CORE  PACKAGE  SIBLINGS", "Allowed:", "Plan:", "server", "loadgen", "backend", "Notes:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPinJSONMatchesPlanner(t *testing.T) {
	code, out := pincertsRun(t, "pin", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var r pinReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	topo, _ := pin.ReadTopology()
	allowed, _ := pin.Allowed()
	want, err := pin.MakePlan(topo, allowed, pin.PlanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed.Equal(allowed) || !r.Plan.Server.Equal(want.Server) || !r.Plan.Gen.Equal(want.Gen) ||
		!r.Plan.Backend.Equal(want.Backend) || len(r.Topology.CPUs) != len(topo.CPUs) || len(r.Plan.Notes) == 0 {
		t.Fatalf("JSON report %+v, planner says %+v", r, want)
	}
}

func TestPinOverrides(t *testing.T) {
	allowed, _ := pin.Allowed()
	first := allowed[0]
	code, out := pincertsRun(t, "pin", "--json", "--server-cpus", fmt.Sprintf("%d-%d", first, first), "--loadgen-cpus", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var r pinReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Plan.Server.Equal(pin.CPUSet{first}) || len(r.Plan.Gen) != 1 {
		t.Fatalf("plan %+v", r.Plan)
	}
}

func TestPinUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--server-cpus", "3-1"},
		{"--loadgen-cpus", "x"},
		{"--server-cpus", "4095-4095"},
		{"--server-cpus", "4096"},
		{"extra-arg"},
		{"--bogus"},
	} {
		if code, _ := pincertsRun(t, "pin", args...); code != exitUsage {
			t.Errorf("pin %v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
