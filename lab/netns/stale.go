package netns

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/loadlab/loadlab/internal/pidstate"
	"github.com/vishvananda/netlink"
)

// RemoveStale deletes the namespaces (under /var/run/netns), bridges and
// veths named with prefix whose creator pid no longer exists, and returns
// their names. Our own and other live runs' objects are left alone.
func RemoveStale(prefix string) ([]string, error) { return scanStale(prefix, true) }

// FindStale lists what RemoveStale would delete, in its order, and deletes
// nothing.
func FindStale(prefix string) ([]string, error) { return scanStale(prefix, false) }

// scanStale finds the stale objects and, with remove, deletes them.
func scanStale(prefix string, remove bool) ([]string, error) {
	if !prefixRe.MatchString(prefix) {
		return nil, errors.New("bad lab prefix " + strconv.Quote(prefix) + ": use 1-3 lowercase letters")
	}
	q := regexp.QuoteMeta(prefix)
	nsRe := regexp.MustCompile(`^` + q + `([0-9]+)-[0-9]+-[a-z][a-z0-9]*$`)
	linkRe := regexp.MustCompile(`^` + q + `(?:br)?([0-9]+)-[0-9]+(?:v[0-9])?$`)
	var removed []string
	var errs []error
	ents, err := os.ReadDir(runDir)
	if err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	for _, e := range ents {
		if stale(nsRe, e.Name()) {
			if remove {
				if err := deleteNamed(e.Name()); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			removed = append(removed, e.Name())
		}
	}
	links, err := linkList()
	if err != nil {
		errs = append(errs, err)
	}
	// Veths first (deleting one end removes its peer), then bridges.
	for _, bridges := range []bool{false, true} {
		for _, link := range links {
			name := link.Attrs().Name
			if _, isBr := link.(*netlink.Bridge); isBr != bridges || !stale(linkRe, name) {
				continue
			}
			if remove {
				if err := delLink(name); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			removed = append(removed, name)
		}
	}
	return removed, errors.Join(errs...)
}

// stale reports whether name matches re and its pid (first group) is dead.
func stale(re *regexp.Regexp, name string) bool {
	m := re.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil || pid == os.Getpid() {
		return false
	}
	return !pidstate.Alive(pid) // a zombie counts as dead
}

// listLinks is netlink.LinkList (a test interrupts it).
var listLinks = netlink.LinkList

// linkList lists the host's links. A dump the kernel interrupted
// (NLM_F_DUMP_INTR: links came or went meanwhile, as when the namespaces
// just deleted take their veths with them) is taken again, a few times.
func linkList() ([]netlink.Link, error) {
	var links []netlink.Link
	var err error
	for try := 0; try < 5; try++ {
		if links, err = listLinks(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			return links, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return links, fmt.Errorf("list the links: %w (5 tries)", err)
}
