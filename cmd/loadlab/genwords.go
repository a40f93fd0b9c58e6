package main

import (
	"errors"

	"github.com/loadlab/loadlab/gen"
)

// genFlag names gen.Config's fields as loadlab gen's flags: gen's
// UsageErrors name fields, and the CLI words them with the flags a user
// typed.
var genFlag = map[string]string{
	"URL":               "the URL",
	"Method":            "--method",
	"Headers":           "--header",
	"Body":              "--body-file",
	"Connections":       "--connections",
	"Duration":          "--duration",
	"Requests":          "--requests",
	"Warmup":            "--warmup",
	"Timeout":           "--timeout",
	"Rate":              "--rate",
	"CPUs":              "--cpus",
	"MaxPending":        "--max-pending",
	"PacingTolerance":   "--pacing-tolerance",
	"NewConn":           "--new-conn",
	"Close":             "--close",
	"SrcAddrs":          "--src-addrs",
	"HTTP3":             "--http3",
	"HTTP2":             "--h2",
	"Streams":           "--streams",
	"VerifySHA256":      "--verify-sha256",
	"NetNS":             "the network namespace",
	"AllowRemote":       "--allow-remote",
	"Shard":             "--shard",
	"StartAt":           "--start-at",
	"StartTolerance":    "the start tolerance",
	"Host":              "--host",
	"TLS.Version":       "--tls",
	"TLS.Curves":        "--curves",
	"TLS.Insecure":      "--insecure",
	"TLS.CAFile":        "--ca",
	"TLS.SNI":           "--sni",
	"TLS.ClientHello":   "--client-hello",
	"TLS.Resume":        "--resume",
	"TLS.ZeroRTT":       "--0rtt",
	"TLS.Engine":        "--tls-engine",
	"TLS.FreshKeyShare": "--fresh-key-share",
	"TLS.Ciphers":       "--ciphers",
}

// genWords words err for the CLI: a gen.UsageError with its fields named
// by their flags, anything else as it is.
func genWords(err error) string {
	var ue *gen.UsageError
	if !errors.As(err, &ue) || err != error(ue) {
		return err.Error()
	}
	return ue.Words(func(field string) string {
		if f, ok := genFlag[field]; ok {
			return f
		}
		return field
	})
}
