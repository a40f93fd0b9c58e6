package scenario

import (
	"context"
	"io"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/watch"
	"github.com/loadlab/loadlab/pin"
)

// Env is one lab session: backend, namespaces, cgroups (lab/env.Env).
type Env interface {
	Plan() pin.Plan
	Net() string
	BackendStats() (backend.Stats, error)
	StartProxy(ctx context.Context, profile string, key certs.KeyType) (Proxy, error)
	GenConfig(p Proxy, base gen.Config) gen.Config
	TimeWait(role string) (int, error)
	Close() error
}

// Proxy is one running proxy (lab/env.Proxy).
type Proxy interface {
	Profile() proxy.Profile
	Key() certs.KeyType
	Version() string
	Watch(every time.Duration) *watch.Watcher
	IdleMemory(ctx context.Context, quiet time.Duration, samples int, every time.Duration) (median uint64, all []uint64, err error)
	ErrorLog() (lines int, causes map[string]int, err error)
	Stop() error
}

// EnvOptions open one Env (the fields of lab/env.Options).
type EnvOptions struct {
	Dir         string
	Net         string
	NoCgroups   bool
	ServerCPUs  pin.CPUSet
	BackendCPUs pin.CPUSet
	LoadgenCPUs pin.CPUSet
	MemoryLimit int64
	Keys        []certs.KeyType
	CertDir     string // certificates shared by the sessions of one run ("" = Dir/certs)
	Log         io.Writer
}

// ErrorSampler is optionally implemented by a Proxy: the first log line
// of each known error cause.
type ErrorSampler interface {
	ErrorSamples() map[string]string
}

// Opener opens an Env.
type Opener func(ctx context.Context, o EnvOptions) (Env, error)

// GenFunc runs the generator (gen.Run).
type GenFunc func(ctx context.Context, cfg gen.Config) (*gen.Result, error)
