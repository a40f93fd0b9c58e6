package gen

import (
	"strconv"
	"strings"
)

// buildRequest serializes the HTTP/1.1 request once; every connection writes
// these same bytes for every request. With NewConn the request still asks
// for keep-alive: the generator closes first after the response, so
// TIME_WAIT lands on its side (see Config.Close and Config.SrcAddrs); send a
// "Connection: close" header to make the server close first instead. c is
// one of a validated Config's requests (its own, or a target's).
func buildRequest(c *reqSpec) []byte {
	var b strings.Builder
	b.WriteString(c.method)
	b.WriteByte(' ')
	b.WriteString(c.target.Path)
	b.WriteString(" HTTP/1.1\r\n")
	if !hasHeader(c.headers, "host") {
		b.WriteString("Host: ")
		b.WriteString(c.target.HostHeader)
		b.WriteString("\r\n")
	}
	if !hasHeader(c.headers, "user-agent") {
		b.WriteString("User-Agent: loadlab\r\n")
	}
	for _, h := range c.headers {
		if strings.EqualFold(h.Name, "content-length") {
			continue // set below from the body
		}
		b.WriteString(h.Name)
		b.WriteString(": ")
		b.WriteString(h.Value)
		b.WriteString("\r\n")
	}
	if len(c.body) > 0 || c.method == "POST" || c.method == "PUT" || c.method == "PATCH" {
		b.WriteString("Content-Length: ")
		b.WriteString(strconv.Itoa(len(c.body)))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.Write(c.body)
	return []byte(b.String())
}
