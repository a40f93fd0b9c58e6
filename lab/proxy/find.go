package proxy

import "github.com/loadlab/loadlab/internal/findbin"

// BinEnv names the environment variable with extra directories (separated
// by ':') searched first for proxy binaries.
const BinEnv = findbin.BinEnv

// FindBinary looks for an executable called name in $LOADLAB_PROXY_BIN, the
// project's .cache/bin, PATH and the system bin/sbin directories, in that
// order (internal/findbin). Its error wraps ErrNotFound and says what to do.
func FindBinary(name string) (string, error) { return findbin.FindBinary(name) }
