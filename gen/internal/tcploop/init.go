package tcploop

import (
	"net/netip"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tlsfd"
)

// Init prepares the loop of lifecycle lc for protocol p with conns
// connection slots (nothing is opened yet: Setup does that on the loop's
// thread).
func (l *Loop) Init(lc *run.Lifecycle, e *Engine, p Proto, conns int) {
	r := lc.R
	l.InitBare(lc, e)
	l.proto = p
	l.nslots = conns
	if e.IO == run.IOUring {
		l.newPoller = func(l *Loop) (poller, error) { return newUringPoller(l) }
	}
	l.batch = lc.Open && r.Spec.PacingTolerance > 0
	l.dst = Sockaddr(r.Dst)
	for _, a := range r.Spec.SrcAddrs {
		l.src = append(l.src, Sockaddr(netip.AddrPortFrom(a, 0)))
	}
	if len(l.src) > 0 {
		l.srcNext = lc.ID % len(l.src)
	}
	if r.TLS != nil {
		var rx *rawio.RxReader
		if l.batch {
			rx = &l.rx // records are read with their receive timestamps
		}
		l.tls = tlsfd.NewLoop(&r.TLS.Client, rx)
	}
}

// InitBare prepares a loop with no TCP slots of its own: its thread,
// epoll poller, wake-up and timeout scan (HTTP/3 on the lean QUIC client
// adds its UDP sockets with Watch).
func (l *Loop) InitBare(lc *run.Lifecycle, e *Engine) {
	l.LC = lc
	l.family, l.pwait2 = e.Family, e.pwait2
	l.wakefd = -1
	l.newPoller = func(l *Loop) (poller, error) { return newEpollPoller(l) }
	l.ScanEvery = lc.R.Spec.ScanEvery()
	l.NextScan = l.ScanEvery
}
