// Package certs creates a local CA and leaf certificates per key type
// (ECDSA P-256, RSA 2048, RSA 4096) for the lab's TLS scenarios.
//
// Imports: certs is a leaf; it imports no other loadlab package, so the CLI,
// the lab and the tests of gen can all use it.
package certs
