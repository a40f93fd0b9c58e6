package session

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
)

// Ports are drawn from [portLow, portHigh), below the kernel's ephemeral
// range (32768-60999): outgoing connections never take them, so a proxy
// restarted in the middle of a port-exhaustion run can bind again.
const (
	portLow      = 20000
	portHigh     = 32000
	portAttempts = 200
)

// freePorts returns n distinct ports on host that are free for TCP (and,
// with udp, for UDP on the same number) right now. The sockets that prove
// it are closed before returning.
func freePorts(listen func(network, addr string) (net.Listener, error), listenPacket func(network, addr string) (net.PacketConn, error), host netip.Addr, n int, udp bool) ([]int, error) {
	var held []func() error
	defer func() {
		for _, c := range held {
			_ = c()
		}
	}()
	var ports []int
	seen := map[int]bool{}
	for i := 0; i < portAttempts && len(ports) < n; i++ {
		port := portLow + rand.IntN(portHigh-portLow)
		if seen[port] {
			continue
		}
		seen[port] = true
		addr := net.JoinHostPort(host.String(), strconv.Itoa(port))
		ln, err := listen("tcp", addr)
		if err != nil {
			continue
		}
		held = append(held, ln.Close)
		if udp {
			pc, err := listenPacket("udp", addr)
			if err != nil {
				continue
			}
			held = append(held, pc.Close)
		}
		ports = append(ports, port)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("no %d free ports on %s in %d-%d after %d tries: stop what listens there", n, host, portLow, portHigh-1, portAttempts)
	}
	return ports, nil
}
