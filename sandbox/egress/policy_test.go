package egress

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		want []string // substrings of the error; none: valid
	}{
		{"zero is none", Policy{}, nil},
		{"full", Policy{Mode: "full", Allow: []string{"127.0.0.1:18601", "api.anthropic.com:443", "[::1]:8080", "API.Example.COM.:443"}, Deny: []string{"0.0.0.0:8080", "nats.internal:4222"}}, nil},
		{"allow", Policy{Mode: "allow", Allow: []string{"api.openai.com:443"}}, nil},
		{"none with a deny list", Policy{Mode: "none", Deny: []string{"127.0.0.1:4222"}}, nil},
		{"bad mode", Policy{Mode: "open"}, []string{`mode: must be one of full allow none, got "open"`}},
		{"none with allow", Policy{Mode: "none", Allow: []string{"a.example:443"}}, []string{"allow: must be empty when the mode is none"}},
		{"no port", Policy{Mode: "full", Allow: []string{"api.anthropic.com"}}, []string{`allow[0]: "api.anthropic.com": want host:port`}},
		{"port zero", Policy{Mode: "full", Allow: []string{"a.example:0"}}, []string{`allow[0]: "a.example:0": the port must be a number from 1 to 65535, got "0"`}},
		{"port too big", Policy{Mode: "full", Allow: []string{"a.example:65536"}}, []string{"from 1 to 65535"}},
		{"named port", Policy{Mode: "full", Allow: []string{"a.example:https"}}, []string{"from 1 to 65535"}},
		{"wildcard", Policy{Mode: "allow", Allow: []string{"*.example.com:443"}}, []string{"wildcards are not supported"}},
		{"url", Policy{Mode: "allow", Allow: []string{"https://api.example.com:443"}}, []string{`allow[0]: "https://api.example.com:443"`}},
		{"zone", Policy{Mode: "full", Allow: []string{"[fe80::1%eth0]:80"}}, []string{"zone"}},
		{"numeric name", Policy{Mode: "full", Allow: []string{"127.1:80"}}, []string{"neither an IP address nor a host name"}},
		{"unspecified allow", Policy{Mode: "full", Allow: []string{"0.0.0.0:8080"}}, []string{"allow[0]:", "unspecified address"}},
		{"bad deny and mode together", Policy{Mode: "x", Deny: []string{"", "a.example:1"}}, []string{"mode:", "deny[0]:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// fakeDNS answers from a table; a name missing from it does not resolve.
type fakeDNS map[string][]string

func (f fakeDNS) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	as, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	var out []netip.Addr
	for _, a := range as {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// testDecider is newDecider(p) with dns and the host's addresses 10.1.2.3
// and 172.17.0.1 (a docker bridge).
func testDecider(t *testing.T, p Policy, dns fakeDNS) *decider {
	t.Helper()
	d, err := newDecider(p)
	if err != nil {
		t.Fatal(err)
	}
	d.resolve = dns.resolve
	d.local = func() ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("172.17.0.1")}, nil
	}
	return d
}

func TestDecide(t *testing.T) {
	dns := fakeDNS{
		"localhost":        {"127.0.0.1", "::1"},
		"rebind.example":   {"93.184.216.34", "127.0.0.1"},
		"evil.example":     {"127.0.0.1"},
		"public.example":   {"93.184.216.34", "2606:2800:220:1::1"},
		"metadata.example": {"169.254.169.254"},
		"ollama.lan":       {"10.1.2.3"},
		"nats.internal":    {"10.0.0.5"},
		"api.fake.test":    {"127.0.0.1"},
	}
	full := Policy{
		Mode:  "full",
		Allow: []string{"127.0.0.1:18601", "ollama.lan:11434", "127.0.0.1:4222", "127.0.0.1:8080", "nats.internal:4222"},
		Deny:  []string{"127.0.0.1:4222", "0.0.0.0:8080", "nats.internal:4222"},
	}
	allow := Policy{Mode: "allow", Allow: []string{"api.fake.test:443", "93.184.216.34:80"}}
	for _, tc := range []struct {
		p    Policy
		dest string
		want string // "ok ADDRS" or a substring of the refusal
	}{
		{full, "127.0.0.1:8081", "a loopback address"},
		{full, "127.0.0.1:18601", "ok 127.0.0.1:18601"},
		{full, "[::1]:18601", "a loopback address"},
		{full, "[::ffff:127.0.0.1]:8081", "a loopback address"},
		{full, "127.9.9.9:80", "a loopback address"},
		{full, "0.0.0.0:80", "unspecified"},
		{full, "0.1.2.3:80", "unspecified"},
		{full, "[::]:80", "unspecified"},
		{full, "localhost:8081", "resolves to 127.0.0.1, a loopback address"},
		{full, "evil.example:443", "resolves to 127.0.0.1"},
		{full, "rebind.example:443", "resolves to 127.0.0.1"},
		{full, "169.254.169.254:80", "link-local"},
		{full, "metadata.example:80", "link-local"},
		{full, "[fe80::1]:80", "link-local"},
		{full, "[fd00:ec2::254]:80", "cloud metadata"},
		{full, "224.0.0.1:80", "multicast"},
		{full, "[ff02::1]:80", "multicast"},
		{full, "10.1.2.3:22", "an address of this host"},
		{full, "172.17.0.1:2375", "an address of this host"},
		{full, "ollama.lan:11434", "ok 10.1.2.3:11434"},
		{full, "ollama.lan:22", "an address of this host"},
		{full, "93.184.216.34:443", "ok 93.184.216.34:443"},
		{full, "Public.Example.:443", "ok 93.184.216.34:443 [2606:2800:220:1::1]:443"},
		{full, "127.0.0.1:4222", "denied"},
		{full, "127.0.0.1:8080", "denied"},
		{full, "10.1.2.3:8080", "denied"},
		{full, "nats.internal:4222", "denied"},
		{full, "10.0.0.5:4222", "denied"},
		{full, "10.0.0.5:4223", "ok 10.0.0.5:4223"},
		{full, "nowhere.example:443", "resolve nowhere.example"},
		{full, "a.example", "not a host:port"},
		{full, "a.example:0", "not a host:port"},
		{allow, "api.fake.test:443", "ok 127.0.0.1:443"},
		{allow, "api.fake.test:80", "not in the allow list"},
		{allow, "93.184.216.34:80", "ok 93.184.216.34:80"},
		{allow, "public.example:80", "not in the allow list"},
		{allow, "93.184.216.34:443", "not in the allow list"},
		{Policy{}, "93.184.216.34:443", "mode none"},
	} {
		t.Run(tc.p.Mode+" "+tc.dest, func(t *testing.T) {
			d := testDecider(t, tc.p, dns)
			addrs, err := d.decide(t.Context(), tc.dest)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				var s []string
				for _, a := range addrs {
					s = append(s, a.String())
				}
				got = "ok " + strings.Join(s, " ")
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("decide(%q) = %q, want %q", tc.dest, got, tc.want)
			}
			if strings.HasPrefix(tc.want, "ok") != (err == nil) {
				t.Errorf("decide(%q) = %q: want ok %v", tc.dest, got, strings.HasPrefix(tc.want, "ok"))
			}
			var ref *Refusal
			if err != nil && !strings.HasPrefix(tc.want, "resolve") && !errors.As(err, &ref) {
				t.Errorf("decide(%q) = %v, want a *Refusal", tc.dest, err)
			}
		})
	}
}

// TestDecideRealResolver: "localhost" is refused through the host's own
// resolver and interface list too, not only the test's tables.
func TestDecideRealResolver(t *testing.T) {
	d, err := newDecider(Policy{Mode: "full"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.decide(t.Context(), "localhost:9"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("decide(localhost:9) = %v, want a loopback refusal", err)
	}
	own, err := interfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range own {
		if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			dest := netip.AddrPortFrom(a, 9).String()
			if _, err := d.decide(t.Context(), dest); err == nil {
				t.Errorf("decide(%s), an address of this host, = nil, want a refusal", dest)
			}
		}
	}
}

func TestHostsAndPlan(t *testing.T) {
	p := Policy{Mode: "allow", Allow: []string{
		"api.anthropic.com:443", "127.0.1.1:9000", "127.0.0.1:18601", "api.anthropic.com:80",
		"10.0.0.9:8080", "localhost:5000", "[::1]:7000", "Api.OpenAI.com:443",
	}}
	want := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"127.0.1.2\tapi.anthropic.com\n127.0.1.3\tapi.openai.com\n"
	for range 3 {
		if got := string(Hosts(p)); got != want {
			t.Fatalf("Hosts() =\n%s\nwant\n%s", got, want)
		}
	}
	fws, _ := plan(p)
	var got []string
	for _, f := range fws {
		got = append(got, f.listen.String()+">"+f.target)
	}
	wantFw := []string{
		"127.0.1.2:443>api.anthropic.com:443", "127.0.1.1:9000>127.0.1.1:9000", "127.0.0.1:18601>127.0.0.1:18601",
		"127.0.1.2:80>api.anthropic.com:80", "127.0.0.1:5000>localhost:5000", "[::1]:7000>[::1]:7000",
		"127.0.1.3:443>api.openai.com:443",
	}
	if !slices.Equal(got, wantFw) {
		t.Errorf("forwarders = %q, want %q", got, wantFw)
	}
	if got := string(Hosts(Policy{})); got != "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" {
		t.Errorf("Hosts(none) = %q", got)
	}
}

func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{"api.anthropic.com:443", "[::1]:8080", "127.0.0.1:1", "[::ffff:127.0.0.1]:80", "a:b:c", "x.:0", "[fe80::1%25eth0]:80", "127.1:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseEntry(s)
		if err != nil {
			return
		}
		again, err := parseEntry(e.String())
		if err != nil || again != e {
			t.Fatalf("parseEntry(%q) = %v, but its String %q parses to %v, %v", s, e, e.String(), again, err)
		}
		if e.port == 0 || e.host == "" {
			t.Fatalf("parseEntry(%q) = %+v, want a port and a host", s, e)
		}
	})
}
