package session

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// dialContext dials from where the generator sits: the host in loopback
// mode, the gen namespace in netns mode. The connection is usable from any
// goroutine.
func (s *Session) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if l := s.netLab(); l != nil {
		return l.DialContext(RoleGen, nil)(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// listenUDP opens an unbound UDP socket where the generator sits, for an
// HTTP/3 client.
func (s *Session) listenUDP() (net.PacketConn, error) {
	if l := s.netLab(); l != nil {
		return l.ListenPacket(RoleGen, "udp", ":0")
	}
	return net.ListenPacket("udp", ":0")
}

// listenIn returns socket openers inside the role's namespace (the host's in
// loopback mode), for picking free ports there.
func (s *Session) listenIn(role string) (listen func(network, addr string) (net.Listener, error), listenPacket func(network, addr string) (net.PacketConn, error)) {
	l := s.netLab()
	if l == nil {
		return net.Listen, net.ListenPacket
	}
	return func(network, addr string) (net.Listener, error) { return l.Listen(role, network, addr) },
		func(network, addr string) (net.PacketConn, error) { return l.ListenPacket(role, network, addr) }
}

// hostFor is the address a role listens on: 127.0.0.1 in loopback mode,
// the role's namespace address in netns mode.
func (s *Session) hostFor(role string) (netip.Addr, error) {
	l := s.netLab()
	if l == nil {
		return netip.MustParseAddr("127.0.0.1"), nil
	}
	a := l.Addr(role)
	if !a.IsValid() {
		return netip.Addr{}, fmt.Errorf("network lab has no %s namespace", role)
	}
	return a, nil
}
