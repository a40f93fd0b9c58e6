package main

import (
	"errors"
	"strings"

	"github.com/loadlab/loadlab/internal/fields"
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
	"IO":                "--io",
	"NewConn":           "--new-conn",
	"Close":             "--close",
	"SrcAddrs":          "--src-addrs",
	"HTTP3":             "--http3",
	"HTTP2":             "--h2",
	"Streams":           "--streams",
	"VerifySHA256":      "--verify-sha256",
	"NetNS":             "the network namespace",
	"AllowRemote":       "--allow-remote",
	"WakeProbe":         "--wake-probe",
	"Shard":             "--shard",
	"StartAt":           "--start-at",
	"StartTolerance":    "the start tolerance",
	"Host":              "--host",
	"Thresholds":        "--threshold",
	"Stages":            "--stages",
	"Targets":           "--targets",
	"TargetWeights":     "--targets-weight",
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

// labFlag names the fields that the lab's and the backend's errors mention
// as the flags of lab run, lab check and serve.
var labFlag = map[string]string{
	"Selection.Profiles":  "--profiles",
	"Selection.Scenarios": "--scenarios",
	"Selection.Keys":      "--keys",
	"Options.Keys":        "--keys",
	"StepScale":           "--step-scale",
	"NoCgroups":           "--no-cgroups",
	"Options.NoCgroups":   "--no-cgroups",
	"ServerCPUs":          "--server-cpus",
	"StallEvery":          "--stall-every",
	"StallFor":            "--stall-for",
	"TLSCert":             "--tls-cert",
	"TLSKey":              "--tls-key",
	"H3":                  "--h3",
	"H2":                  "--h2",
	"H2MaxStreams":        "--h2-max-streams",
	"Apps":                "--app",
}

// flagOf names a library field as the CLI's flag for it (itself when the
// CLI has none).
func flagOf(field string) string {
	if f, ok := genFlag[field]; ok {
		return f
	}
	if f, ok := labFlag[field]; ok {
		return f
	}
	return field
}

// worder is a library error that names fields (gen.UsageError,
// fields.Error).
type worder interface {
	error
	Words(name func(field string) string) string
}

// genWords words err for the CLI: the fields a library error names as the
// flags the user typed, whatever context wraps it.
func genWords(err error) string {
	msg := err.Error()
	var w worder
	if errors.As(err, &w) {
		return strings.Replace(msg, w.Error(), w.Words(flagOf), 1)
	}
	return fields.Words(msg, flagOf)
}
