package tlsfd

import (
	"bufio"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/gen/internal/sock"

	utls "github.com/refraction-networking/utls"
	"golang.org/x/sys/unix"
)

// Our client (handshake by crypto/tls or uTLS, then our record layer)
// against crypto/tls servers over socketpairs.

// rlServerConfig serves the shared test certificate (P-256).
func rlServerConfig(t testing.TB) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{testutil.KeyPair(t, certs.P256)}}
}

// rlSocketpair returns a non-blocking client socket connected over
// loopback TCP (which cuts records anywhere, unlike a unix socketpair) and
// the server end as a net.Conn.
func rlSocketpair(t testing.TB) (int, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	unix.SetNonblock(fd, true)
	nc, err := ln.Accept()
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd); nc.Close() })
	return fd, nc
}

// rlPattern is the body the test server sends: byte i of a response.
func rlPattern(i int) byte { return byte(i*7 + i>>12) }

// rlServe answers commands, one per line: a number n asks for n bytes of
// rlPattern; "close" sends "bye" and close_notify; "garbage" sends a record
// that cannot authenticate; "fin" sends "x" and closes without
// close_notify; "cut" sends half a record and closes.
func rlServe(c *tls.Conn) error {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil //nolint:nilerr // the client went away: the server goroutine ends; the client went away
		}
		raw := c.NetConn()
		switch cmd := strings.TrimSpace(line); cmd {
		case "close":
			c.Write([]byte("bye"))
			return c.Close()
		case "garbage":
			_, err = raw.Write(append([]byte{23, 3, 3, 0, 40}, make([]byte, 40)...))
		case "fin":
			c.Write([]byte("x"))
			return raw.Close()
		case "cut":
			raw.Write([]byte{23, 3, 3, 0, 40, 1, 2, 3})
			return raw.Close()
		default:
			n, err := strconv.Atoi(cmd)
			if err != nil {
				return fmt.Errorf("bad command %q", cmd)
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = rlPattern(i)
			}
			_, err = c.Write(b)
			if err != nil {
				return err
			}
		}
		if err != nil {
			return err
		}
	}
}

// rlStartServer runs a crypto/tls server with cfg and rlServe on a new
// socketpair and returns the client's fd.
func rlStartServer(t testing.TB, cfg *tls.Config) int {
	fd, nc := rlSocketpair(t)
	done := make(chan error, 1)
	go func() {
		c := tls.Server(nc, cfg)
		err := c.Handshake()
		if err == nil {
			err = rlServe(c)
		}
		nc.Close()
		done <- err
	}()
	t.Cleanup(func() {
		nc.Close() // ends rlServe; rlSocketpair closes fd
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("server: %v", err)
		}
	})
	return fd
}

func rlWait(t testing.TB, fd int, events int16) {
	t.Helper()
	p := []unix.PollFd{{Fd: int32(fd), Events: events}}
	for {
		n, err := unix.Poll(p, 5000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("poll: nothing within 5s (%v)", err)
		}
		return
	}
}

// rlHandshake drives s's handshake to the end, as the loop does.
func rlHandshake(t testing.TB, s *Conn) Session {
	t.Helper()
	s.next, s.stop = iter.Pull(s.handshakeSeq)
	for {
		ended, err := s.step()
		if err != nil {
			t.Fatal(err)
		}
		if ended {
			break
		}
		rlWait(t, s.fd, unix.POLLIN)
	}
	if s.hsErr != nil {
		t.Fatalf("handshake: %v", s.hsErr)
	}
	rlFlush(t, s)
	return s.state()
}

func rlFlush(t testing.TB, s *Conn) {
	t.Helper()
	for s.Pending() {
		rlWait(t, s.fd, unix.POLLOUT)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

func rlWrite(t testing.TB, s *Conn, msg string) {
	t.Helper()
	if n, err := s.Write([]byte(msg)); err != nil || n != len(msg) {
		t.Fatalf("write: %d %v", n, err)
	}
	rlFlush(t, s)
}

// rlRead reads until it has n bytes or an error other than sock.ErrWouldBlock.
func rlRead(t testing.TB, s *Conn, n int) ([]byte, error) {
	t.Helper()
	buf := make([]byte, readBufSize)
	var got []byte
	for len(got) < n {
		k, err := s.recv(buf)
		if err == sock.ErrWouldBlock {
			rlWait(t, s.fd, unix.POLLIN)
			continue
		}
		if k == 0 && err == nil {
			t.Fatal("read returned (0, nil)")
		}
		got = append(got, buf[:k]...)
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// rlExchange asks for responses of the given sizes and checks them.
func rlExchange(t testing.TB, s *Conn, sizes ...int) {
	t.Helper()
	for _, n := range sizes {
		rlWrite(t, s, strconv.Itoa(n)+"\n")
		got, err := rlRead(t, s, n)
		if err != nil || len(got) != n {
			t.Fatalf("%d-byte response: got %d bytes, %v", n, len(got), err)
		}
		for i, b := range got {
			if b != rlPattern(i) {
				t.Fatalf("%d-byte response: byte %d is %d, want %d", n, i, b, rlPattern(i))
			}
		}
	}
}

// rlCloseNotify checks that close_notify reads as the data before it, then
// io.EOF.
func rlCloseNotify(t testing.TB, s *Conn) {
	t.Helper()
	rlWrite(t, s, "close\n")
	got, err := rlRead(t, s, 1<<20)
	if string(got) != "bye" || err != io.EOF {
		t.Fatalf("close_notify: %q %v, want \"bye\" then io.EOF", got, err)
	}
}

// readBufSize is the size of a TCP loop's read buffer (gen's tcploop.go).
const readBufSize = 256 << 10

var rlSizes = []int{1, 1024, maxPlaintext, maxPlaintext + 1, 1 << 20}

func rlUTLSSpec(suite uint16) *utls.ClientHelloSpec {
	return &utls.ClientHelloSpec{
		CipherSuites:       []uint16{suite},
		CompressionMethods: []byte{0},
		Extensions: []utls.TLSExtension{
			&utls.SNIExtension{},
			&utls.SupportedCurvesExtension{Curves: []utls.CurveID{utls.X25519}},
			&utls.SupportedPointsExtension{SupportedPoints: []byte{0}},
			&utls.SignatureAlgorithmsExtension{SupportedSignatureAlgorithms: []utls.SignatureScheme{utls.ECDSAWithP256AndSHA256}},
			&utls.KeyShareExtension{KeyShares: []utls.KeyShare{{Group: utls.X25519}}},
			&utls.PSKKeyExchangeModesExtension{Modes: []uint8{utls.PskModeDHE}},
			&utls.SupportedVersionsExtension{Versions: []uint16{utls.VersionTLS13}},
			&utls.ALPNExtension{AlpnProtocols: []string{"http/1.1"}},
		},
	}
}

// TLS 1.3 in each suite (uTLS offers just the one; Go's own client picks
// AES-GCM or ChaCha20 by hardware): the connection switches to our record
// layer, skips the server's session tickets, reads responses of one byte to
// 1 MiB (many records, cut anywhere by the socket) and ends at close_notify.
func TestTLSRecordInterop13(t *testing.T) {
	std := &tls.Config{
		InsecureSkipVerify: true,
		MinVersion:         tls.VersionTLS13,
		ClientSessionCache: tls.NewLRUClientSessionCache(4), // so the server sends tickets
	}
	cases := []struct {
		name  string
		suite uint16 // 0: whatever Go picks
	}{
		{"go", 0},
		{"utls-aes128", tls.TLS_AES_128_GCM_SHA256},
		{"utls-aes256", tls.TLS_AES_256_GCM_SHA384},
		{"utls-chacha20", tls.TLS_CHACHA20_POLY1305_SHA256},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fd := rlStartServer(t, rlServerConfig(t))
			tl := &Loop{}
			var s *Conn
			if c.suite == 0 {
				s = newSecureStd(fd, tl, std)
			} else {
				s = newSecureUTLS(fd, tl, &utls.Config{InsecureSkipVerify: true}, rlUTLSSpec(c.suite))
			}
			st := rlHandshake(t, s)
			if st.Version != tls.VersionTLS13 || (c.suite != 0 && st.Suite != c.suite) {
				t.Fatalf("negotiated %s %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.Suite))
			}
			s.afterHandshake(st.Version, st.Suite, false)
			if s.phase != phaseRecords || s.lib != nil {
				t.Fatalf("phase %d after the handshake, want our record layer", s.phase)
			}
			rlExchange(t, s, rlSizes...)
			if s.rec.tickets == 0 {
				t.Error("no session ticket seen")
			}
			// Whether the socket cut a record across reads here depends on
			// timing (TestTLSRecordTrickle cuts them on purpose); what must
			// hold either way is that no carry buffer is left held and at
			// most one was ever taken (each one taken came back for reuse).
			if s.carry != nil || len(tl.carry) > 1 {
				t.Errorf("carry %d bytes held, %d free: want none held, at most one taken and returned", len(s.carry), len(tl.carry))
			}
			rlCloseNotify(t, s)
			s.Release()
		})
	}
}

// TLS 1.2 with the AEAD suites switches to our record layer; a CBC suite
// keeps crypto/tls. The captured ServerHello random and the logged master
// secret give the same exporter as crypto/tls (RFC 5705 over the PRF).
func TestTLSRecordInterop12(t *testing.T) {
	all := []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	}
	for _, suite := range all {
		t.Run(tls.CipherSuiteName(suite), func(t *testing.T) {
			srv := rlServerConfig(t)
			srv.MaxVersion, srv.CipherSuites = tls.VersionTLS12, []uint16{suite}
			fd := rlStartServer(t, srv)
			s := newSecureStd(fd, &Loop{}, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12, CipherSuites: all})
			st := rlHandshake(t, s)
			if st.Version != tls.VersionTLS12 || st.Suite != suite {
				t.Fatalf("negotiated %s %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.Suite))
			}
			spec, aead := cipherSpecFor(st.Version, st.Suite)
			if aead {
				cs := s.std.ConnectionState()
				want, err := cs.ExportKeyingMaterial("EXPERIMENTAL-loadlab", nil, 32)
				if err != nil {
					t.Fatal(err)
				}
				sr := s.fdc.serverRandom()
				got := prf12(spec.hash, s.keys.master, "EXPERIMENTAL-loadlab", append(append([]byte(nil), s.keys.clientRandom...), sr...), 32)
				if string(got) != string(want) {
					t.Fatalf("exporter from our secrets %x, crypto/tls %x", got, want)
				}
			}
			s.afterHandshake(st.Version, st.Suite, false)
			if want := map[bool]uint8{true: phaseRecords, false: phaseLib}[aead]; s.phase != want {
				t.Fatalf("phase %d, want %d", s.phase, want)
			}
			rlExchange(t, s, rlSizes...)
			rlCloseNotify(t, s)
			s.Release()
		})
	}
}

// With --resume, TLS 1.3 tickets reach crypto/tls's session cache before the
// switch, and the next connection resumes. A resumed TLS 1.2 session (no
// master secret in the key log) keeps crypto/tls.
func TestTLSRecordResume(t *testing.T) {
	for _, vers := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		t.Run(tls.VersionName(vers), func(t *testing.T) {
			cfg := &tls.Config{
				InsecureSkipVerify: true,
				MinVersion:         vers,
				MaxVersion:         vers,
				ClientSessionCache: tls.NewLRUClientSessionCache(4),
			}
			srv := rlServerConfig(t) // one server: one ticket key
			for i := 0; i < 2; i++ {
				s := newSecureStd(rlStartServer(t, srv), &Loop{}, cfg)
				st := rlHandshake(t, s)
				if st.Resumed != (i == 1) {
					t.Fatalf("connection %d: resumed %v", i, st.Resumed)
				}
				s.afterHandshake(st.Version, st.Suite, true)
				want := uint8(phaseRecords)
				switch {
				case vers == tls.VersionTLS13:
					if s.phase != phaseTickets {
						t.Fatalf("connection %d: phase %d, want the ticket phase", i, s.phase)
					}
				case i == 1:
					want = phaseLib
				}
				rlExchange(t, s, 1024)
				if s.phase != want {
					t.Fatalf("connection %d: phase %d after the first response, want %d", i, s.phase, want)
				}
				rlExchange(t, s, 1<<20, 1)
				rlCloseNotify(t, s)
				s.Release()
			}
		})
	}
}

// uTLS's Chrome preset, as --client-hello chrome sends it.
func TestTLSRecordChromeHello(t *testing.T) {
	c := &Client{UTLS: &utls.Config{InsecureSkipVerify: true}, Hello: utls.HelloChrome_Auto}
	s := NewLoop(c, nil).NewConn(rlStartServer(t, rlServerConfig(t)))
	st := rlHandshake(t, s)
	s.afterHandshake(st.Version, st.Suite, false)
	if s.phase != phaseRecords {
		t.Fatalf("phase %d, want our record layer (%s)", s.phase, tls.CipherSuiteName(st.Suite))
	}
	rlExchange(t, s, rlSizes...)
	rlCloseNotify(t, s)
}

// Errors after the switch: a record that does not authenticate, FIN without
// close_notify (EOF, as crypto/tls accepts at a record boundary) and FIN in
// the middle of a record.
func TestTLSRecordErrors(t *testing.T) {
	cases := []struct {
		cmd  string
		data string
		err  error
	}{
		{"garbage", "", errBadRecordMAC},
		{"fin", "x", io.EOF},
		{"cut", "", io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			s := newSecureStd(rlStartServer(t, rlServerConfig(t)), &Loop{}, &tls.Config{InsecureSkipVerify: true})
			st := rlHandshake(t, s)
			s.afterHandshake(st.Version, st.Suite, false)
			rlExchange(t, s, 10)
			rlWrite(t, s, c.cmd+"\n")
			got, err := rlRead(t, s, 1<<20)
			if string(got) != c.data || err != c.err {
				t.Fatalf("%q %v, want %q %v", got, err, c.data, c.err)
			}
			if _, again := s.recv(make([]byte, readBufSize)); again != err {
				t.Errorf("next read: %v, want the same error", again)
			}
			if s.carry != nil {
				t.Error("carry still held")
			}
		})
	}
}

// Our record layer as the server against crypto/tls as the client: we send
// a KeyUpdate asking for one back; crypto/tls rekeys, answers, and the data
// after it flows both ways under the new keys.
func TestTLSRecordKeyUpdateInterop(t *testing.T) {
	fd, nc := rlSocketpair(t)
	done := make(chan error, 1)
	go func() {
		c := tls.Client(nc, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
		err := c.Handshake()
		buf := make([]byte, 5)
		for _, step := range []struct{ in, out string }{{"hello", "world"}, {"again", "done!"}} {
			if err != nil {
				break
			}
			if _, err = io.ReadFull(c, buf); err == nil && string(buf) != step.in {
				err = fmt.Errorf("client read %q, want %q", buf, step.in)
			}
			if err == nil {
				_, err = c.Write([]byte(step.out))
			}
		}
		done <- err
	}()
	s := &Conn{fd: fd, tl: &Loop{}, keys: &keyLog{}}
	cfg := rlServerConfig(t)
	cfg.KeyLogWriter = s.keys
	cfg.SessionTicketsDisabled = true
	s.std = tls.Server(fdConn{s}, cfg)
	s.lib = s.std
	st := rlHandshake(t, s)
	rec, err := newRecordLayer13(st.Suite, s.keys.clientTraffic, s.keys.serverTraffic)
	if err != nil {
		t.Fatal(err)
	}
	s.useRecords(rec)
	if err := rec.sendKeyUpdate(true); err != nil {
		t.Fatal(err)
	}
	if err := s.send(rec.reply); err != nil {
		t.Fatal(err)
	}
	rec.reply = rec.reply[:0]
	rlWrite(t, s, "hello")
	if got, err := rlRead(t, s, 5); string(got) != "world" || err != nil {
		t.Fatalf("read %q %v, want world", got, err)
	}
	rlWrite(t, s, "again")
	if got, err := rlRead(t, s, 5); string(got) != "done!" || err != nil {
		t.Fatalf("read %q %v, want done!", got, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("crypto/tls client: %v", err)
	}
	if len(rec.reply) != 0 {
		t.Error("answered an unrequested KeyUpdate")
	}
}

// Records arriving a few bytes at a time: partial records wait in the carry
// buffer, which goes back to the loop's free list once complete.
func TestTLSRecordTrickle(t *testing.T) {
	for _, s := range allRecordSuites {
		t.Run(suiteName(s.vers, s.suite), func(t *testing.T) {
			fd, nc := rlSocketpair(t)
			client, server := layerPair(t, s.vers, s.suite)
			tl := &Loop{}
			c := &Conn{fd: fd, tl: tl}
			c.useRecords(client)
			msg := make([]byte, 20000)
			rand.Read(msg)
			wire := server.seal(nil, typeApplicationData, msg)
			buf := make([]byte, readBufSize)
			var got []byte
			for off, step := 0, 1; off < len(wire); step = step*3 + 1 {
				end := min(len(wire), off+step)
				if _, err := nc.Write(wire[off:end]); err != nil {
					t.Fatal(err)
				}
				off = end
				rlWait(t, fd, unix.POLLIN)
				for {
					n, err := c.Read(buf)
					if err == sock.ErrWouldBlock {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, buf[:n]...)
				}
			}
			if string(got) != string(msg) {
				t.Fatalf("got %d bytes, want %d", len(got), len(msg))
			}
			if c.carry != nil || len(tl.carry) != 1 {
				t.Errorf("carry held %v, %d free, want none held and one free", c.carry != nil, len(tl.carry))
			}
		})
	}
}

// During the handshake fdConn hands crypto/tls one record at a time, across
// an empty socket, and keeps the ServerHello random.
func TestFdConnOneRecordPerRead(t *testing.T) {
	fd, nc := rlSocketpair(t)
	s := &Conn{fd: fd}
	random := make([]byte, 32)
	rand.Read(random)
	hello := append([]byte{hsServerHello, 0, 0, 38, 3, 3}, random...)
	rec1 := append([]byte{typeHandshake, 3, 3, 0, byte(len(hello))}, hello...)
	rec2 := []byte{typeChangeCipherSpec, 3, 3, 0, 1, 1}
	nc.Write(append(append([]byte(nil), rec1...), rec2[:3]...))
	buf := make([]byte, 1000)
	read := func(want []byte, wantErr error) {
		t.Helper()
		rlWait(t, fd, unix.POLLIN)
		n, err := fdConn{s}.Read(buf)
		if string(buf[:n]) != string(want) || err != wantErr {
			t.Fatalf("read %x %v, want %x %v", buf[:n], err, want, wantErr)
		}
	}
	read(rec1[:5], nil)
	read(rec1[5:], nil)
	if n, err := (fdConn{s}).Read(buf); n != 0 || err != sock.ErrWouldBlock {
		t.Fatalf("partial header: %d %v, want sock.ErrWouldBlock", n, err)
	}
	nc.Write(rec2[3:])
	read(rec2[:5], nil)
	read(rec2[5:], nil)
	if string(s.fdc.serverRandom()) != string(random) {
		t.Fatalf("server random %x, want %x", s.fdc.serverRandom(), random)
	}
	if s.fdc.in.sinceCCS != 0 || !s.fdc.atBoundary() {
		t.Fatalf("records since CCS %d, boundary %v", s.fdc.in.sinceCCS, s.fdc.atBoundary())
	}
}
