package quic

import (
	"errors"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
)

// A server that sends CRYPTO data out of order and never fills the gap
// (Initial packets at offsets past 1 MiB): the connection ends with
// CRYPTO_BUFFER_EXCEEDED once maxCryptoBuffered bytes wait, instead of
// keeping up to 16 MiB per level. No handshake flight needs more.
func TestCryptoOutOfOrderBounded(t *testing.T) {
	cl := newTestClient(t, "", true, nil)
	var c Conn
	now := time.Now()
	if _, err := c.Start(cl, now, nil); err != nil {
		t.Fatal(err)
	}
	var client, server wire.Keys
	if err := wire.SetInitialKeys(cl.kdf256, c.dcid[:c.dcidLen], &client, &server); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1000)
	scid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	const sent = 2 << 20 // past the bound, far below the old 16 MiB
	var pn uint64
	for off := uint64(1 << 20); off < 1<<20+sent && !c.Closed(); off += uint64(len(chunk)) {
		b, lenOff, pnOff := wire.AppendLongHeader(nil, wire.Initial, c.SCID(), scid, nil, pn)
		b = wire.AppendCrypto(b, off, chunk)
		b = server.Seal(b, 0, lenOff, pnOff, pn)
		pn++
		c.Receive(now, b, nil)
	}
	var e *Error
	if !c.Closed() || !errors.As(c.Err(), &e) || e.Code != 0x0d {
		t.Fatalf("after %d packets of out-of-order CRYPTO data: closed %v, err %v; want CRYPTO_BUFFER_EXCEEDED (0x0d)", pn, c.Closed(), c.Err())
	}
	if got := len(c.crypto[0].arena); got > maxCryptoBuffered {
		t.Errorf("%d bytes buffered, want at most %d", got, maxCryptoBuffered)
	}
	if n := uint64(maxCryptoBuffered / len(chunk)); pn > n+1 {
		t.Errorf("closed after %d packets, want %d (the bound)", pn, n+1)
	}
}
