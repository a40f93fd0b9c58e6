package tls13

import (
	"bytes"
	"context"
	"crypto/tls"
	"testing"
)

// quicPair runs a crypto/tls QUIC server against a QUIC-mode Handshake
// in memory, passing messages level by level, and checks that both sides
// agree on every secret and on the transport parameters.
func quicPair(t *testing.T, srvCfg *tls.Config, groups []Group, suites []uint16, verify bool) *Handshake {
	t.Helper()
	p := pki(t)
	cfg := &Config{ServerName: "localhost", ALPN: []string{"h3"}, Groups: groups, Suites: suites, QUIC: true,
		QUICTransportParams: []byte("client-params")}
	if verify {
		cfg.Verifier = NewVerifier(p.roots, "localhost", 0)
	}
	if err := cfg.Prepare(); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srvCfg.MinVersion = tls.VersionTLS13
	srvCfg.NextProtos = []string{"h3"}
	q := tls.QUICServer(&tls.QUICConfig{TLSConfig: srvCfg})
	q.SetTransportParameters([]byte("server-params"))
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var h Handshake
	ch, err := h.StartQUIC(c, []byte("client-PARAMS"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ch[0] != typeClientHello {
		t.Fatalf("QUIC Start emitted %#x, want a bare ClientHello", ch[0])
	}
	toServer := map[tls.QUICEncryptionLevel][]byte{tls.QUICEncryptionLevelInitial: ch}
	readSecret := map[tls.QUICEncryptionLevel][]byte{}
	writeSecret := map[tls.QUICEncryptionLevel][]byte{}
	var gotParams []byte
	for round := 0; round < 10 && !h.Done(); round++ {
		for _, lvl := range []tls.QUICEncryptionLevel{tls.QUICEncryptionLevelInitial, tls.QUICEncryptionLevelHandshake} {
			if len(toServer[lvl]) > 0 {
				if err := q.HandleData(lvl, toServer[lvl]); err != nil {
					t.Fatalf("server: %v", err)
				}
				toServer[lvl] = nil
			}
		}
		for e := q.NextEvent(); e.Kind != tls.QUICNoEvent; e = q.NextEvent() {
			switch e.Kind {
			case tls.QUICSetReadSecret:
				readSecret[e.Level] = bytes.Clone(e.Data)
			case tls.QUICSetWriteSecret:
				writeSecret[e.Level] = bytes.Clone(e.Data)
			case tls.QUICTransportParameters:
				gotParams = bytes.Clone(e.Data)
			case tls.QUICWriteData:
				lvl := LevelInitial
				if e.Level == tls.QUICEncryptionLevelHandshake {
					lvl = LevelHandshake
				} else if e.Level != tls.QUICEncryptionLevelInitial {
					continue // NewSessionTicket at 1-RTT: not the handshake's
				}
				out, err := h.ReadQUIC(lvl, e.Data, nil)
				if err != nil {
					t.Fatalf("client: %v", err)
				}
				next := tls.QUICEncryptionLevelInitial
				if h.Done() {
					next = tls.QUICEncryptionLevelHandshake
				}
				toServer[next] = append(toServer[next], out...)
			}
		}
	}
	if !h.Done() {
		t.Fatal("handshake did not complete")
	}
	if err := q.HandleData(tls.QUICEncryptionLevelHandshake, toServer[tls.QUICEncryptionLevelHandshake]); err != nil {
		t.Fatalf("server on the client's Finished: %v", err)
	}
	for e := q.NextEvent(); e.Kind != tls.QUICNoEvent; e = q.NextEvent() {
		switch e.Kind {
		case tls.QUICSetReadSecret:
			readSecret[e.Level] = bytes.Clone(e.Data)
		case tls.QUICSetWriteSecret:
			writeSecret[e.Level] = bytes.Clone(e.Data)
		}
	}
	if string(gotParams) != "client-PARAMS" {
		t.Errorf("server got transport params %q", gotParams)
	}
	if string(h.QUICTransportParams()) != "server-params" {
		t.Errorf("client got transport params %q", h.QUICTransportParams())
	}
	cHS, sHS := h.HandshakeSecrets()
	if !bytes.Equal(cHS, readSecret[tls.QUICEncryptionLevelHandshake]) || !bytes.Equal(sHS, writeSecret[tls.QUICEncryptionLevelHandshake]) {
		t.Error("handshake secrets differ from the server's")
	}
	cAP, sAP := h.ApplicationKeys()
	if !bytes.Equal(cAP.Secret, readSecret[tls.QUICEncryptionLevelApplication]) || !bytes.Equal(sAP.Secret, writeSecret[tls.QUICEncryptionLevelApplication]) {
		t.Error("application secrets differ from the server's")
	}
	if h.ALPN() != "h3" {
		t.Errorf("ALPN %q", h.ALPN())
	}
	return &h
}

func TestQUICHandshakeWithCryptoTLS(t *testing.T) {
	p := pki(t)
	for _, key := range []string{"p256", "rsa2048"} {
		for _, suite := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
			srv := &tls.Config{Certificates: []tls.Certificate{p.leaves[key]}}
			h := quicPair(t, srv, []Group{X25519}, []uint16{suite}, true)
			if h.Retried() || h.Suite().ID != suite {
				t.Errorf("retried %v suite %#x, want %#x", h.Retried(), h.Suite().ID, suite)
			}
		}
	}
}

func TestQUICHelloRetryRequest(t *testing.T) {
	p := pki(t)
	srv := &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}, CurvePreferences: []tls.CurveID{tls.CurveP256}}
	h := quicPair(t, srv, []Group{X25519, P256}, nil, false)
	if !h.Retried() || h.Group() != P256 {
		t.Errorf("retried %v group %v", h.Retried(), h.Group())
	}
}

func TestQUICWrongLevel(t *testing.T) {
	cfg := &Config{ServerName: "localhost", ALPN: []string{"h3"}, QUIC: true}
	if err := cfg.Prepare(); err != nil {
		t.Fatal(err)
	}
	c, _ := NewClient(cfg)
	var h Handshake
	h.Start(c, nil)
	if _, err := h.ReadQUIC(LevelHandshake, []byte{typeServerHello, 0, 0, 0}, nil); err != errQUICLevel {
		t.Errorf("ServerHello at the Handshake level: %v", err)
	}
	if _, err := h.StartQUIC(c, []byte("x"), nil); err != errParamsLen {
		t.Errorf("StartQUIC with parameters of another length: %v", err)
	}
	if (&Config{QUIC: true}).Prepare() == nil {
		t.Error("QUIC without ALPN accepted")
	}
}
