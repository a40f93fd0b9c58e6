package gen

// validateH3 checks the options that HTTP/3 changes or that only make sense
// with it.
func (c *Config) validateH3() error {
	t := c.TLS
	if t.ZeroRTT && !c.HTTP3 {
		return fieldErr("TLS.ZeroRTT", "works only with {HTTP3} (TCP+TLS here never sends early data)")
	}
	if t.ZeroRTT && !t.Resume {
		return fieldErr("TLS.ZeroRTT", "needs {TLS.Resume}: early data rides on a resumed TLS session")
	}
	if !c.HTTP3 {
		return nil
	}
	if c.target.Scheme != "https" {
		return fieldErr("HTTP3", "needs an https:// URL (got %s)", c.URL)
	}
	if t.Version == "1.2" {
		return fieldErr("HTTP3", "runs on TLS 1.3 only (QUIC has no TLS 1.2): drop {TLS.Version} 1.2")
	}
	if t.ClientHello != "" && t.ClientHello != "go" {
		return fieldErr("TLS.ClientHello", "%s is TCP-only: QUIC handshakes use Go's crypto/tls; drop it with {HTTP3}", t.ClientHello)
	}
	if c.Close == CloseRST {
		return fieldErr("Close", "rst is a TCP option; HTTP/3 connections end with a QUIC CONNECTION_CLOSE: drop it with {HTTP3}")
	}
	return nil
}
