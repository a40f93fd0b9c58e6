package gen

import (
	"strconv"
	"strings"
)

// buildRequest serializes the request once; every connection writes these
// same bytes for every request. With NewConn the request still asks for
// keep-alive: the generator closes first after the response, so TIME_WAIT
// lands on its side (see --close and --src-addrs); add -H "Connection: close"
// to make the server close first instead.
func buildRequest(c *Config, t Target) []byte {
	var b strings.Builder
	b.WriteString(c.Method)
	b.WriteByte(' ')
	b.WriteString(t.Path)
	b.WriteString(" HTTP/1.1\r\n")
	hasHost, hasUA := false, false
	for _, h := range c.Headers {
		name, _, _ := strings.Cut(h, ":")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "host":
			hasHost = true
		case "user-agent":
			hasUA = true
		case "content-length":
			continue // set below from the body
		}
	}
	if !hasHost {
		b.WriteString("Host: ")
		b.WriteString(t.HostHeader)
		b.WriteString("\r\n")
	}
	if !hasUA {
		b.WriteString("User-Agent: loadlab\r\n")
	}
	for _, h := range c.Headers {
		name, val, _ := strings.Cut(h, ":")
		if strings.EqualFold(strings.TrimSpace(name), "content-length") {
			continue
		}
		b.WriteString(strings.TrimSpace(name))
		b.WriteString(": ")
		b.WriteString(strings.TrimSpace(val))
		b.WriteString("\r\n")
	}
	if len(c.Body) > 0 || c.Method == "POST" || c.Method == "PUT" || c.Method == "PATCH" {
		b.WriteString("Content-Length: ")
		b.WriteString(strconv.Itoa(len(c.Body)))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.Write(c.Body)
	return []byte(b.String())
}
