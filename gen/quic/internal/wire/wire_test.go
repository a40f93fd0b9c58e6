package wire

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"encoding/hex"
	"testing"

	"github.com/loadlab/loadlab/gen/tls13"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		v   uint64
		enc string
	}{{37, "25"}, {15293, "7bbd"}, {494878333, "9d7f3e7d"}, {151288809941952652, "c2197c5eff14e88c"}} {
		b := AppendVarint(nil, c.v)
		if hex.EncodeToString(b) != c.enc {
			t.Errorf("%d: %x want %s", c.v, b, c.enc)
		}
		v, n := ReadVarint(b)
		if v != c.v || n != len(b) {
			t.Errorf("%s: %d,%d", c.enc, v, n)
		}
		if _, n := ReadVarint(b[:len(b)-1]); n != 0 && len(b) > 1 {
			t.Errorf("%s truncated: n %d", c.enc, n)
		}
	}
}

func TestDecodePacketNumber(t *testing.T) {
	// RFC 9000 §A.3.
	if got := DecodePacketNumber(0xa82f30ea, 0x9b32, 2); got != 0xa82f9b32 {
		t.Errorf("got %#x", got)
	}
	if got := DecodePacketNumber(-1, 0, 4); got != 0 {
		t.Errorf("first: %d", got)
	}
}

// RFC 9001 §A.1: the Initial secrets and keys for DCID 8394c8f03e515708.
func TestInitialKeysRFC9001(t *testing.T) {
	k := tls13.NewKDF(crypto.SHA256)
	var cs, ss [32]byte
	InitialSecrets(k, unhex(t, "8394c8f03e515708"), &cs, &ss)
	if hex.EncodeToString(cs[:]) != "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea" {
		t.Errorf("client initial secret %x", cs)
	}
	if hex.EncodeToString(ss[:]) != "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b" {
		t.Errorf("server initial secret %x", ss)
	}
	var c, sk Keys
	if err := SetInitialKeys(k, unhex(t, "8394c8f03e515708"), &c, &sk); err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(c.iv[:]) != "fa044b2f42a3fd3b46fb255c" {
		t.Errorf("iv %x", c.iv)
	}
	var mask [16]byte
	c.hp.Encrypt(mask[:], unhex(t, "d1b1c98dd7689fb8ec11d242b123dc9b"))
	if hex.EncodeToString(mask[:5]) != "437b9aec36" {
		t.Errorf("hp mask %x", mask[:5])
	}
}

// RFC 9001 §A.5: a ChaCha20-Poly1305 short header packet.
func TestChaChaShortHeaderRFC9001(t *testing.T) {
	s := tls13.SuiteByID(tls.TLS_CHACHA20_POLY1305_SHA256)
	var k Keys
	if err := k.Set(tls13.NewKDF(crypto.SHA256), s, unhex(t, "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b")); err != nil {
		t.Fatal(err)
	}
	pkt := unhex(t, "4cfe4189655e5cd55c41f69080575d7999c25a5bfb")
	pn, payload, err := k.Open(pkt, 1, 654360563)
	if err != nil || pn != 654360564 || !bytes.Equal(payload, []byte{1}) {
		t.Fatalf("pn %d payload %x err %v", pn, payload, err)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	for _, id := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		s := tls13.SuiteByID(id)
		kdf := tls13.NewKDF(s.Hash)
		var w, r Keys
		secret := bytes.Repeat([]byte{7}, s.Hash.Size())
		w.Set(kdf, s, secret)
		r.Set(kdf, s, secret)
		dcid, scid := []byte("dcid1234"), []byte("scid5678")
		b, lenOff, pnOff := AppendLongHeader(nil, Handshake, dcid, scid, nil, 77)
		b = AppendCrypto(b, 0, []byte("hello, handshake"))
		b = w.Seal(b, 0, lenOff, pnOff, 77)
		b2, pnOff2 := AppendShortHeader(b, dcid, false, 78)
		b2 = append(b2, FramePing, 0, 0, 0)
		b2 = w.Seal(b2, len(b), -1, pnOff2, 78)
		h, err := ParseHeader(b2, len(dcid))
		if err != nil || h.Type != Handshake || !bytes.Equal(h.DCID, dcid) || !bytes.Equal(h.SCID, scid) || h.Len != len(b) {
			t.Fatalf("%#x: header %+v err %v", id, h, err)
		}
		pn, payload, err := r.Open(b2[:h.Len], h.PNOffset, 70)
		var f Frame
		if err != nil || pn != 77 {
			t.Fatalf("%#x: pn %d err %v", id, pn, err)
		}
		if n, err := ParseFrame(payload, &f); err != nil || n != len(payload) || string(f.Data) != "hello, handshake" {
			t.Fatalf("%#x: frame %+v err %v", id, f, err)
		}
		rest := b2[h.Len:]
		h, err = ParseHeader(rest, len(dcid))
		if err != nil || h.Type != Short {
			t.Fatalf("short: %+v %v", h, err)
		}
		if pn, _, err := r.Open(rest, h.PNOffset, 77); err != nil || pn != 78 {
			t.Fatalf("%#x short: pn %d err %v", id, pn, err)
		}
		rest[len(rest)-1] ^= 1
		if _, _, err := r.Open(rest, h.PNOffset, 77); err != ErrDecrypt {
			t.Fatalf("tampered packet opened: %v", err)
		}
	}
}

// RFC 9001 §A.4: a Retry packet.
func TestRetryTagRFC9001(t *testing.T) {
	pkt := unhex(t, "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba")
	odcid := unhex(t, "8394c8f03e515708")
	if ok, _ := VerifyRetry(nil, odcid, pkt); !ok {
		t.Fatal("valid Retry rejected")
	}
	h, err := ParseHeader(pkt, 8)
	if err != nil || h.Type != Retry || string(h.Token) != "token" || hex.EncodeToString(h.SCID) != "f067a5502a4262b5" {
		t.Fatalf("%+v %v", h, err)
	}
	if ok, _ := VerifyRetry(nil, odcid[1:], pkt); ok {
		t.Error("Retry accepted for another original DCID")
	}
	bad := bytes.Clone(pkt)
	bad[20] ^= 1
	if ok, _ := VerifyRetry(nil, odcid, bad); ok {
		t.Error("tampered Retry accepted")
	}
	if got := AppendRetryTag(bytes.Clone(pkt[:len(pkt)-16]), odcid); !bytes.Equal(got, pkt) {
		t.Errorf("AppendRetryTag %x", got)
	}
}

func TestFramesRoundTrip(t *testing.T) {
	var b []byte
	b = AppendAck(b, []Range{{10, 12}, {5, 7}, {0, 2}}, 9)
	b = AppendStream(b, 4, 100, []byte("data"), true)
	b = AppendConnectionClose(b, true, 0x100, "bye")
	b = append(b, FramePadding, FramePadding, FrameHandshakeDone)
	var f Frame
	n, err := ParseFrame(b, &f)
	if err != nil || f.Type != FrameAck || f.Largest != 12 || f.FirstRange != 2 || f.Delay != 9 {
		t.Fatalf("ack %+v %v", f, err)
	}
	b = b[n:]
	n, err = ParseFrame(b, &f)
	if err != nil || f.Type != FrameStream || f.StreamID != 4 || f.Offset != 100 || string(f.Data) != "data" || !f.Fin {
		t.Fatalf("stream %+v %v", f, err)
	}
	b = b[n:]
	n, err = ParseFrame(b, &f)
	if err != nil || f.Type != FrameConnectionCloseApp || f.ErrorCode != 0x100 || string(f.Reason) != "bye" {
		t.Fatalf("close %+v %v", f, err)
	}
	b = b[n:]
	if n, err = ParseFrame(b, &f); err != nil || n != 2 {
		t.Fatalf("padding n %d %v", n, err)
	}
	if _, err = ParseFrame([]byte{0x21}, &f); err != ErrFrame {
		t.Error("unknown frame type accepted")
	}
}

func TestTransportParams(t *testing.T) {
	in := TransportParams{InitialSCID: []byte("abcdefgh"), InitialMaxData: 16 << 20, MaxStreamsUni: 100, MaxIdleTimeout: 30000}
	b := AppendTransportParams(nil, &in)
	b = append(b, 0x40, 0xff, 1, 9) // an unknown parameter
	var out TransportParams
	if err := ParseTransportParams(b, &out); err != nil {
		t.Fatal(err)
	}
	if string(out.InitialSCID) != "abcdefgh" || out.InitialMaxData != 16<<20 || out.MaxStreamsUni != 100 || out.MaxIdleTimeout != 30000 || out.HasOriginalDCID {
		t.Errorf("%+v", out)
	}
	if err := ParseTransportParams(append(b, b...), &out); err != ErrParams {
		t.Error("repeated parameters accepted")
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x41, 0})
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Add([]byte{0xf0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b, 8)
		if err == nil && (h.Len > len(b) || h.PNOffset > h.Len) {
			t.Fatalf("len %d pn %d of %d", h.Len, h.PNOffset, len(b))
		}
	})
}

func FuzzParseFrame(f *testing.F) {
	f.Add(AppendAck(nil, []Range{{10, 12}, {0, 2}}, 1))
	f.Add(AppendStream(nil, 0, 5, []byte("x"), true))
	f.Add(AppendCrypto(nil, 0, []byte("ch")))
	f.Add(AppendConnectionClose(nil, false, 10, "r"))
	f.Add([]byte{FrameNewConnectionID, 1, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x0a, 4, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		for i := 0; len(b) > 0 && i < 1000; i++ {
			n, err := ParseFrame(b, &fr)
			if err != nil {
				return
			}
			if n <= 0 || n > len(b) {
				t.Fatalf("n %d of %d", n, len(b))
			}
			b = b[n:]
		}
	})
}

func FuzzTransportParams(f *testing.F) {
	f.Add(AppendTransportParams(nil, &TransportParams{InitialSCID: []byte("x"), InitialMaxData: 5}))
	f.Add([]byte{0x02, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p TransportParams
		ParseTransportParams(b, &p)
	})
}

func FuzzOpen(f *testing.F) {
	f.Add([]byte{0x4c, 0xfe, 0x41, 0x89, 0x65, 0x5e, 0x5c, 0xd5, 0x5c, 0x41, 0xf6, 0x90, 0x80, 0x57, 0x5d, 0x79, 0x99, 0xc2, 0x5a, 0x5b, 0xfb})
	var k Keys
	k.Set(tls13.NewKDF(crypto.SHA256), InitialSuite, make([]byte, 32))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b, 0)
		if err != nil || h.Type == Retry || h.Type == VersionNegotiation {
			return
		}
		k.Open(b[:h.Len], h.PNOffset, 5)
	})
}
