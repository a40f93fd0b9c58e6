package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds for Kill and Remove.
const (
	killWithin   = 5 * time.Second // SIGKILL rounds until the group is empty
	removeWithin = 2 * time.Second // rmdir retries while the kernel says busy
)

// killAll sends SIGKILL to every pid list returns (never to ourselves) and
// repeats until list is empty, so processes forked meanwhile die too. A list
// that no longer exists counts as empty.
func killAll(what string, list func() ([]int, error)) error {
	deadline := time.Now().Add(killWithin)
	self := os.Getpid()
	for {
		pids, err := list()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot list processes of cgroup %s: %v", what, err)
		}
		pids = removeInt(pids, self)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s still holds %d processes (first %d) after SIGKILL for %s", what, len(pids), pids[0], killWithin)
		}
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGKILL) // ESRCH: already gone
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func removeInt(list []int, x int) []int {
	out := list[:0]
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// union merges pid lists into one sorted list without duplicates.
func union(lists ...[]int) []int {
	seen := map[int]bool{}
	var out []int
	for _, l := range lists {
		for _, p := range l {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Ints(out)
	return out
}
