package netns

import (
	"context"
	"net"
)

// DialContext returns a dial function whose sockets are created inside the
// role's namespace (each dial runs on a thread locked there for the length
// of the connect); the connections it returns can be used from anywhere. d
// may be nil. It fits http.Transport.DialContext and, wrapped, fasthttp's
// Dial.
func (l *Lab) DialContext(role string, d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{}
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		var c net.Conn
		err := l.Do(role, func() error {
			var err error
			c, err = d.DialContext(ctx, network, address)
			return err
		})
		return c, err
	}
}

// Listen opens a listener inside the role's namespace.
func (l *Lab) Listen(role, network, address string) (net.Listener, error) {
	var ln net.Listener
	err := l.Do(role, func() error {
		var err error
		ln, err = net.Listen(network, address)
		return err
	})
	return ln, err
}

// ListenPacket opens a packet socket (UDP, e.g. for HTTP/3) inside the
// role's namespace.
func (l *Lab) ListenPacket(role, network, address string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := l.Do(role, func() error {
		var err error
		pc, err = net.ListenPacket(network, address)
		return err
	})
	return pc, err
}
