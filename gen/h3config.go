package gen

// validateH3 checks the options that HTTP/3 changes or that only make sense
// with it.
func (c *Config) validateH3() error {
	t := c.TLS
	if t.ZeroRTT && !c.HTTP3 {
		return usage("--0rtt works only with --http3 (TCP+TLS here never sends early data)")
	}
	if t.ZeroRTT && !t.Resume {
		return usage("--0rtt needs --resume: early data rides on a resumed TLS session")
	}
	if !c.HTTP3 {
		return nil
	}
	if tg, err := ParseTarget(c.URL); err == nil && tg.Scheme != "https" {
		return usage("--http3 needs an https:// URL (got %s)", c.URL)
	}
	if t.Version == "1.2" {
		return usage("--http3 runs on TLS 1.3 only (QUIC has no TLS 1.2): drop --tls 1.2")
	}
	if t.ClientHello != "" && t.ClientHello != "go" {
		return usage("--client-hello %s is TCP-only: QUIC handshakes use Go's crypto/tls; drop --client-hello with --http3", t.ClientHello)
	}
	if c.Close == CloseRST {
		return usage("--close rst is a TCP option; HTTP/3 connections end with a QUIC CONNECTION_CLOSE: drop --close with --http3")
	}
	return nil
}
