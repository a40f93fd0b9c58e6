package backend

// appendEchoHead appends the first two /echo lines: the request line
// "METHOD URI PROTO" and "RemoteAddr: ADDR".
func appendEchoHead(dst []byte, method, uri, proto, remote string) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, uri...)
	dst = append(dst, ' ')
	dst = append(dst, proto...)
	dst = append(dst, "\nRemoteAddr: "...)
	dst = append(dst, remote...)
	return append(dst, '\n')
}

// appendHeaderLine appends one "Name: value" line of the /echo body.
func appendHeaderLine[T string | []byte](dst []byte, name, value T) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, '\n')
}
