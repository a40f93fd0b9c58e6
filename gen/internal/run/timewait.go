package run

import "github.com/loadlab/loadlab/internal/sockdiag"

// The run counts its TIME_WAIT sockets to the target through sock_diag
// (internal/sockdiag): openDiag in the run's namespace, countTimeWait once a
// second.
var (
	openDiag      = sockdiag.Open
	countTimeWait = sockdiag.CountTo
)
