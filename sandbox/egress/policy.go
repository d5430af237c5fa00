package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The modes of a Policy.
const (
	ModeFull  = "full"
	ModeAllow = "allow"
	ModeNone  = "none"
)

// maxEntries bounds Allow and Deny (each name entry also takes a loopback
// address inside the sandbox).
const maxEntries = 256

// Policy says where a sandboxed agent may connect. The zero Policy is Mode "none".
type Policy struct {
	// Mode is "full" (any destination reachable from the host, except the
	// host's own addresses: loopback, the host's interface addresses,
	// link-local and unspecified ones, unless listed in Allow), "allow"
	// (only the Allow entries) or "none" (nothing; no proxy is started).
	Mode string
	// Allow lists "host:port" entries (a name or an IP; "[::1]:443") the
	// agent reaches in "full" and "allow" mode; a loopback or host-local
	// destination is reachable only when listed here exactly.
	Allow []string
	// Deny lists "host:port" entries never reached, even when listed in
	// Allow: the gateway's own listeners (web chat, metrics, NATS). A
	// name is matched by name and by the addresses it resolves to; an
	// unspecified address ("0.0.0.0:8080", "[::]:8080", a listener on
	// every interface) matches every address of the host on that port.
	Deny []string
}

// mode is p.Mode with the zero value spelled out.
func (p Policy) mode() string {
	if p.Mode == "" {
		return ModeNone
	}
	return p.Mode
}

// Validate reports a clear error for a bad Mode or entry (the caller adds the YAML key).
func (p Policy) Validate() error {
	var errs []error
	switch p.mode() {
	case ModeFull, ModeAllow:
	case ModeNone:
		if len(p.Allow) > 0 {
			errs = append(errs, fmt.Errorf("allow: must be empty when the mode is none (nothing is reachable), got %d entries", len(p.Allow)))
		}
	default:
		errs = append(errs, fmt.Errorf("mode: must be one of full allow none, got %q", p.Mode))
	}
	for _, list := range []struct {
		key     string
		entries []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		if len(list.entries) > maxEntries {
			errs = append(errs, fmt.Errorf("%s: at most %d entries, got %d", list.key, maxEntries, len(list.entries)))
		}
		for i, s := range list.entries {
			e, err := parseEntry(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", list.key, i, err))
				continue
			}
			if list.key == "allow" && e.ip.IsValid() && e.ip.IsUnspecified() {
				errs = append(errs, fmt.Errorf("allow[%d]: %q is the unspecified address, which names no destination; list the address the service listens on (e.g. 127.0.0.1:%d)", i, s, e.port))
			}
		}
	}
	return errors.Join(errs...)
}

// entry is one parsed "host:port".
type entry struct {
	host string     // a lower-case name without a trailing dot, or ip's text
	ip   netip.Addr // valid when the host is an IP address (unmapped)
	port uint16
}

// name reports whether the entry names a host (rather than an address).
func (e entry) name() bool { return !e.ip.IsValid() }

// String is host:port, brackets around an IPv6 address.
func (e entry) String() string {
	return net.JoinHostPort(e.host, strconv.Itoa(int(e.port)))
}

// addrPort is the entry's address and port; valid only for an IP entry.
func (e entry) addrPort() netip.AddrPort { return netip.AddrPortFrom(e.ip, e.port) }

// example is shown in the errors of parseEntry.
const example = "want host:port, e.g. api.anthropic.com:443, 127.0.0.1:8080 or [::1]:8080"

// parseEntry parses a "host:port" of a policy or of a request (a CONNECT
// target, an absolute URI's host).
func parseEntry(s string) (entry, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return entry{}, fmt.Errorf("%q: %s: %w", s, example, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 || port[0] == '+' {
		return entry{}, fmt.Errorf("%q: the port must be a number from 1 to 65535, got %q", s, port)
	}
	e := entry{port: uint16(p)}
	if strings.Contains(host, "%") {
		return entry{}, fmt.Errorf("%q: an address with a zone (%%) is not allowed", s)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		e.ip = ip.Unmap()
		e.host = e.ip.String()
		return e, nil
	}
	if strings.Contains(host, ":") {
		return entry{}, fmt.Errorf("%q: %q is not an IP address", s, host)
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if err := checkName(name); err != nil {
		return entry{}, fmt.Errorf("%q: %w", s, err)
	}
	e.host = name
	return e, nil
}

// checkName reports whether name is a DNS host name: dot-separated
// labels of letters, digits, '-' and '_' (1 to 63 bytes, no '-' at either
// end), 253 bytes at most, and a last label that is not all digits (a
// resolver may read "127.1" as an address).
func checkName(name string) error {
	if name == "" {
		return errors.New("the host is empty")
	}
	if len(name) > 253 {
		return fmt.Errorf("the host name is longer than 253 bytes")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%q is not a host name (a label is empty or longer than 63 bytes)", name)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%q is not a host name (a label starts or ends with '-')", name)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%q is not a host name (byte %q; wildcards are not supported)", name, c)
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return fmt.Errorf("%q is neither an IP address nor a host name", name)
	}
	return nil
}

// Refusal is the error of a destination the policy refuses.
type Refusal struct {
	Dest   string // the destination asked for, host:port
	Reason string // why, in a few words
}

func (r *Refusal) Error() string { return "egress refused " + r.Dest + ": " + r.Reason }

// decider decides destinations by a policy.
type decider struct {
	mode       string
	allowNames map[string]bool // host:port of the name entries of Allow
	allowAddrs map[netip.AddrPort]bool
	denyNames  []entry // resolved at each decision
	denyAddrs  map[netip.AddrPort]bool
	denyPorts  map[uint16]bool // ports of the unspecified Deny entries

	// resolve looks a name up (net.DefaultResolver; tests replace it).
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// local lists the host's own interface addresses.
	local func() ([]netip.Addr, error)
}

// newDecider compiles p, which must be valid.
func newDecider(p Policy) (*decider, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := &decider{
		mode:       p.mode(),
		allowNames: map[string]bool{},
		allowAddrs: map[netip.AddrPort]bool{},
		denyAddrs:  map[netip.AddrPort]bool{},
		denyPorts:  map[uint16]bool{},
		resolve:    lookup,
		local:      interfaceAddrs,
	}
	for _, s := range p.Allow {
		e, _ := parseEntry(s)
		if e.name() {
			d.allowNames[e.String()] = true
		} else {
			d.allowAddrs[e.addrPort()] = true
		}
	}
	for _, s := range p.Deny {
		e, _ := parseEntry(s)
		switch {
		case e.name():
			d.denyNames = append(d.denyNames, e)
		case e.ip.IsUnspecified():
			d.denyPorts[e.port] = true
		default:
			d.denyAddrs[e.addrPort()] = true
		}
	}
	return d, nil
}

// lookupTimeout bounds one name resolution.
const lookupTimeout = 10 * time.Second

// lookup resolves host with the default resolver.
func lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// interfaceAddrs lists the addresses of the host's interfaces.
func interfaceAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list the host's addresses: %w", err)
	}
	var out []netip.Addr
	for _, a := range as {
		var ip net.IP
		switch a := a.(type) {
		case *net.IPNet:
			ip = a.IP
		case *net.IPAddr:
			ip = a.IP
		}
		if x, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, x.Unmap())
		}
	}
	return out, nil
}

// metadata are cloud metadata addresses outside the link-local ranges
// (AWS's IPv6 endpoint).
var metadata = []netip.Prefix{netip.MustParsePrefix("fd00:ec2::254/128")}

// thisNetwork is 0.0.0.0/8: a connection to it reaches the host itself.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// hostLocal says why a is the host's own or otherwise out of bounds, or
// "" when it is an ordinary destination.
func hostLocal(a netip.Addr, own []netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified() || a.Is4() && thisNetwork.Contains(a):
		return "an unspecified address (the host itself)"
	case a.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata lives there)"
	case a.IsMulticast() || a.IsInterfaceLocalMulticast() || a.IsLinkLocalMulticast():
		return "a multicast address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, p := range metadata {
		if p.Contains(a) {
			return "a cloud metadata address"
		}
	}
	for _, o := range own {
		if a == o {
			return "an address of this host"
		}
	}
	return ""
}

// decide resolves hostport and returns the addresses to dial (each one
// checked), a *Refusal, or an error when the name cannot be resolved.
// The caller dials these addresses and never the name, so that a second
// resolution cannot answer differently (DNS rebinding).
func (d *decider) decide(ctx context.Context, hostport string) ([]netip.AddrPort, error) {
	e, err := parseEntry(hostport)
	if err != nil {
		return nil, &Refusal{Dest: hostport, Reason: "not a host:port"}
	}
	dest := e.String()
	refuse := func(format string, args ...any) error {
		return &Refusal{Dest: dest, Reason: fmt.Sprintf(format, args...)}
	}
	if d.mode != ModeFull && d.mode != ModeAllow {
		return nil, refuse("the network is off for this agent (mode none)")
	}
	listed := e.name() && d.allowNames[dest]
	if e.name() {
		for _, n := range d.denyNames {
			if n.host == e.host && n.port == e.port {
				return nil, refuse("denied")
			}
		}
	}
	var addrs []netip.Addr
	if e.name() {
		if addrs, err = d.resolve(ctx, e.host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", e.host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no address", e.host)
		}
	} else {
		addrs = []netip.Addr{e.ip}
	}
	own, err := d.local()
	if err != nil {
		return nil, err
	}
	deny := d.denied(ctx)
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), e.port)
		local := hostLocal(ap.Addr(), own)
		switch {
		case deny[ap] || d.denyPorts[e.port] && local != "":
			return nil, refuse("denied (%s)", ap)
		case listed || d.allowAddrs[ap]:
		case d.mode == ModeAllow:
			return nil, refuse("not in the allow list")
		case local != "":
			if e.name() {
				return nil, refuse("resolves to %s, %s, which is reachable only when listed in the allow list", ap.Addr(), local)
			}
			return nil, refuse("%s, which is reachable only when listed in the allow list", local)
		}
		out = append(out, ap)
	}
	return out, nil
}

// denied are the Deny addresses, names resolved now. A Deny name that
// does not resolve matches by name only.
func (d *decider) denied(ctx context.Context) map[netip.AddrPort]bool {
	if len(d.denyNames) == 0 {
		return d.denyAddrs
	}
	out := make(map[netip.AddrPort]bool, len(d.denyAddrs))
	for ap := range d.denyAddrs {
		out[ap] = true
	}
	for _, n := range d.denyNames {
		as, err := d.resolve(ctx, n.host)
		if err != nil {
			continue
		}
		for _, a := range as {
			out[netip.AddrPortFrom(a.Unmap(), n.port)] = true
		}
	}
	return out
}
