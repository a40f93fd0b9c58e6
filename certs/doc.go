// Package certs creates a local CA and leaf certificates per key type
// (ECDSA P-256, RSA 2048, RSA 4096) for the lab's TLS scenarios.
package certs
