package netns

import (
	"errors"
	"testing"

	"github.com/vishvananda/netlink"
)

// TestLinkListRetriesInterruptedDump: a link dump the kernel interrupted
// (links vanishing as deleted namespaces take their veths) is taken
// again; one that stays interrupted is an error, and other errors are not
// retried.
func TestLinkListRetriesInterruptedDump(t *testing.T) {
	defer func(f func() ([]netlink.Link, error)) { listLinks = f }(listLinks)
	calls := 0
	listLinks = func() ([]netlink.Link, error) {
		calls++
		if calls < 3 {
			return nil, netlink.ErrDumpInterrupted
		}
		return []netlink.Link{&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Name: "x"}}}, nil
	}
	links, err := linkList()
	if err != nil || len(links) != 1 || calls != 3 {
		t.Fatalf("after 2 interrupted dumps: %d links, %v, %d calls", len(links), err, calls)
	}

	calls = 0
	listLinks = func() ([]netlink.Link, error) { calls++; return nil, netlink.ErrDumpInterrupted }
	if _, err := linkList(); !errors.Is(err, netlink.ErrDumpInterrupted) || calls != 5 {
		t.Fatalf("always interrupted: %v after %d calls, want the error after 5", err, calls)
	}

	calls = 0
	other := errors.New("permission denied")
	listLinks = func() ([]netlink.Link, error) { calls++; return nil, other }
	if _, err := linkList(); !errors.Is(err, other) || calls != 1 {
		t.Fatalf("another error: %v after %d calls, want it at once", err, calls)
	}
}
