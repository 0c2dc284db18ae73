package web

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Hosts is what the Host header of a request may name. A request to any
// other name is refused (421): a page of another site whose name its
// owner has made point at this server (DNS rebinding) is, to the browser,
// of the same origin as the server, and could otherwise read the history
// and send it away. The browser sends the name from the page's address,
// so that name is what the check sees.
type Hosts struct {
	names []string // lower case, without a trailing dot
	// anyIP accepts any IP address: a browser sends one only when the
	// page's address has it, which no DNS answer can make.
	anyIP bool
}

// loopbackNames are this machine's names for itself.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// AllowedHosts is what a request to a server listening on listen
// (HOST:PORT) may name: the listen host (an IP address or the name
// given), and the loopback names (localhost, 127.0.0.1, ::1) when it is
// loopback; listening on every address (0.0.0.0, ::, or no host), any IP
// address, the loopback names and this machine's name (os.Hostname).
// Other names, those the server is reached by (a DNS name, a proxy's),
// are given as extra: names or IP addresses, without a port.
func AllowedHosts(listen string, extra []string) (*Hosts, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, err
	}
	h := &Hosts{}
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		h.anyIP = true
		h.names = append(h.names, loopbackNames...)
		if name, err := os.Hostname(); err == nil && name != "" {
			h.names = append(h.names, normalHost(name))
		}
	case Loopback(listen):
		h.names = append(h.names, normalHost(host))
		h.names = append(h.names, loopbackNames...)
	default:
		h.names = append(h.names, normalHost(host))
	}
	for _, e := range extra {
		name := normalHost(e)
		if net.ParseIP(name) == nil {
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				return nil, fmt.Errorf("allowed host %q: want a host name or an IP address, without a port or a scheme: %s", e, strings.Join(errs, "; "))
			}
		}
		h.names = append(h.names, name)
	}
	slices.Sort(h.names)
	h.names = slices.Compact(h.names)
	return h, nil
}

// Allows reports whether a request's Host header (name or address, with
// or without a port) is one the server answers to.
func (h *Hosts) Allows(hostHeader string) bool {
	host := normalHost(hostOnly(hostHeader))
	if host == "" {
		return false
	}
	if h.anyIP && net.ParseIP(host) != nil {
		return true
	}
	return slices.Contains(h.names, host)
}

// String lists the names, for messages.
func (h *Hosts) String() string {
	s := strings.Join(h.names, ", ")
	if h.anyIP {
		s = "any IP address, " + s
	}
	return s
}

// hostOnly is a Host header's name or address, without its port or the
// brackets of an IPv6 address.
func hostOnly(hostHeader string) string {
	host := hostHeader
	if name, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = name
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// normalHost is a host name as the check compares it: lower case,
// without the trailing dot of a fully qualified name; an IP address in
// its usual form.
func normalHost(s string) string {
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if ip := net.ParseIP(s); ip != nil {
		return ip.String()
	}
	return s
}
