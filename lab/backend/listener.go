package backend

import (
	"net"
	"sync"
	"sync/atomic"
)

// countingListener counts accepted and closed connections and remembers the
// open ones so Close can cut connections that never go idle.
type countingListener struct {
	net.Listener
	app      int // the named backend it listens for (1-based; 0 = the one unnamed backend)
	accepted atomic.Uint64
	closed   atomic.Uint64

	mu    sync.Mutex
	conns map[*countedConn]struct{}
}

func newCountingListener(ln net.Listener) *countingListener {
	return &countingListener{Listener: ln, conns: make(map[*countedConn]struct{})}
}

// Accept returns the next connection, counted and tracked.
func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	cc := &countedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[cc] = struct{}{}
	l.mu.Unlock()
	return cc, nil
}

// open returns the number of accepted connections not yet closed.
func (l *countingListener) open() uint64 {
	c := l.closed.Load() // read closed first so open never underflows
	return l.accepted.Load() - c
}

// closeAll force-closes every tracked connection.
func (l *countingListener) closeAll() {
	l.mu.Lock()
	conns := make([]*countedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// countedConn reports its first Close to its listener.
type countedConn struct {
	net.Conn
	l    *countingListener
	once atomic.Bool
}

// Close closes the connection; only the first call is counted.
func (c *countedConn) Close() error {
	err := c.Conn.Close()
	if c.once.CompareAndSwap(false, true) {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.closed.Add(1)
	}
	return err
}
