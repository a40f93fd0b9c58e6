package proc

import (
	"runtime"
	"sync"
)

// Pdeathsig fires when the *thread* that forked the child exits, not the
// process (golang/go#27505). The Go runtime ends a thread when a goroutine
// exits while locked to it (netns code does that when it cannot restore a
// namespace). So every fork happens on one thread that a goroutine holds
// locked for the life of the program: it ends only when loadlab does.
var (
	spawnOnce sync.Once
	spawnReq  chan func()
)

// onSpawnerThread runs fn on the spawner thread and returns its error.
func onSpawnerThread(fn func() error) error {
	spawnOnce.Do(func() {
		spawnReq = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked, see above
			for f := range spawnReq {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnReq <- func() { errc <- fn() }
	return <-errc
}
