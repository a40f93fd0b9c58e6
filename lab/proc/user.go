package proc

import (
	"fmt"
	"os/exec"
	"os/user"
	"strconv"

	"github.com/loadlab/loadlab/internal/findbin"
)

// ids are the credentials of a resolved user.
type ids struct {
	uid, gid int
	groups   []int
}

// lookupUser resolves a user name or numeric uid.
func lookupUser(name string) (ids, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.Atoi(name); numErr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return ids{}, fmt.Errorf("user %q does not exist; create it (proc.EnsureUser, or useradd --system --no-create-home --shell /usr/sbin/nologin %s) or use nobody", name, name)
	}
	var out ids
	if out.uid, err = strconv.Atoi(u.Uid); err != nil {
		return ids{}, fmt.Errorf("user %q: uid %q is not a number", name, u.Uid)
	}
	if out.gid, err = strconv.Atoi(u.Gid); err != nil {
		return ids{}, fmt.Errorf("user %q: gid %q is not a number", name, u.Gid)
	}
	gs, err := u.GroupIds()
	if err != nil {
		gs = []string{u.Gid}
	}
	for _, g := range gs {
		if n, err := strconv.Atoi(g); err == nil {
			out.groups = append(out.groups, n)
		}
	}
	return out, nil
}

// EnsureUser makes sure a system user exists to run lab processes as (for
// example "loadlab"): if it is missing it is created with useradd as a
// system account with its own group, no home directory and no login shell.
// It needs root. It returns whether the user was created.
func EnsureUser(name string) (created bool, err error) {
	if _, err := user.Lookup(name); err == nil {
		return false, nil
	}
	useradd, err := findbin.SystemTool("useradd")
	if err != nil {
		return false, fmt.Errorf("cannot create user %s: %v", name, err)
	}
	out, err := exec.Command(useradd, "--system", "--user-group", "--no-create-home",
		"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("cannot create user %s: %v: %s; run as root or pass an existing user such as nobody", name, err, out)
	}
	return true, nil
}
