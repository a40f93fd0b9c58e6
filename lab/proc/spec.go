package proc

import (
	"syscall"

	"github.com/loadlab/loadlab/internal/findbin"

	"github.com/loadlab/loadlab/lab/cgroup"
)

// DefaultWrapper is the binary Start runs as the wrapper: the running
// program itself, which must dispatch ExecSubcommand to ExecMain.
const DefaultWrapper = findbin.SelfExe

// ExecSubcommand is the hidden first argument that makes the wrapper binary
// call ExecMain.
const ExecSubcommand = "__exec"

// Spec describes a process to start.
type Spec struct {
	Name string   // label for errors and logs; default: base name of Path
	Path string   // program (findbin.Trusted); a name without '/' is a system tool (findbin.SystemTool)
	Args []string // arguments after argv[0]
	Env  []string // added to the minimal environment (findbin.Environ): nothing else of ours is passed
	Dir  string   // working directory; "" inherits ours

	Group  cgroup.Group // joined before exec; nil = no cgroup
	CPUs   string       // CPU affinity list ("1", "0-1"), used with or without Group (no-cgroups mode still pins)
	NetNS  string       // network namespace file to enter (netns.Lab.NSPath); "" = ours
	User   string       // run as this user (name or uid); "" = as we are. See EnsureUser.
	Stdout string       // log file for stdout (appended); "" = discarded
	Stderr string       // log file for stderr (appended; may equal Stdout); "" = discarded

	StopSignal syscall.Signal // first signal Stop sends; 0 = SIGTERM (nginx: SIGQUIT is graceful, SIGTERM fast)
	Wrapper    string         // wrapper binary (findbin.Trusted); "" = DefaultWrapper
}
