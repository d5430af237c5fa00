package main

// The agents' sandbox as gateway run, gateway worker and gateway check see
// it: whether one can be had, the gateway's own listeners kept from every
// agent's network, and what each agent gets.

import (
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/sandbox"
)

// sandboxProbe says whether a sandbox can be had here (the bwrap path, or
// why not); tests replace it.
var sandboxProbe = sandbox.Available

// startSandbox decides at start whether agents can run as configured: an
// error when no sandbox can be had and agents.sandbox is not off. It
// returns the line /readyz adds ("" none): the warning that agents run
// unsandboxed.
func startSandbox(cfg config.Config, log *slog.Logger) (note string, err error) {
	if cfg.Agents.Sandbox == sandbox.Off {
		log.Warn("agents run unsandboxed (agents.sandbox: off): each reads and reaches whatever the gateway's user can, its secrets and other threads included")
		return "sandbox: off (agents.sandbox: off): agents run unsandboxed, as the gateway's user", nil
	}
	path, err := sandboxProbe()
	if err != nil {
		return "", noSandbox(cfg, err)
	}
	log.Info("agents run sandboxed", "sandbox", "bwrap", "path", path)
	return "", nil
}

// noSandbox is the error of a start where no sandbox can be had.
func noSandbox(cfg config.Config, why error) error {
	return fmt.Errorf("agents.sandbox: %s: no sandbox can be had on this machine: %s; install bubblewrap, or set agents.sandbox: off to run agents unsandboxed (allowed: %s)",
		cfg.Agents.Sandbox, strings.TrimPrefix(why.Error(), "sandbox: "), strings.Join(sandbox.Modes, " "))
}

// agentSpecs is cfg.AgentSpec with deny (the gateway's own listeners)
// added to every sandboxed agent's network policy.
func agentSpecs(cfg config.Config, deny []string) func(string) (agent.Spec, bool) {
	return func(name string) (agent.Spec, bool) {
		s, ok := cfg.AgentSpec(name)
		if ok && s.Sandbox != nil {
			s.Sandbox.Network.Deny = append(s.Sandbox.Network.Deny, deny...)
		}
		return s, ok
	}
}

// addrs returns the addresses of the listeners of lns that are open.
func addrs(lns ...net.Listener) []net.Addr {
	var out []net.Addr
	for _, ln := range lns {
		if ln != nil {
			out = append(out, ln.Addr())
		}
	}
	return out
}

// ownListeners are the gateway's own listeners no agent may reach, as
// host:port: the web chat's, the metrics endpoint's, the NATS servers',
// and the addresses of bound (listening already: a port 0 made real). One
// on every address is also listed as its loopback forms.
func ownListeners(cfg config.Config, bound ...net.Addr) []string {
	var out []string
	add := func(hp string) {
		host, port, err := net.SplitHostPort(hp)
		if err != nil || port == "0" {
			return
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			out = append(out, net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port), net.JoinHostPort("localhost", port))
			return
		}
		out = append(out, hp)
	}
	if slices.Contains(cfg.Platforms(), web.Platform) {
		add(config.SectionOf[web.Config](cfg, web.Platform).Listen)
	}
	add(cfg.Metrics.Listen)
	for _, u := range strings.Split(cfg.Cluster.NATS.URL, ",") {
		if p, err := url.Parse(strings.TrimSpace(u)); err == nil && p.Host != "" {
			if p.Port() == "" {
				add(net.JoinHostPort(p.Hostname(), "4222"))
			} else {
				add(p.Host)
			}
		}
	}
	for _, a := range bound {
		if a != nil {
			add(a.String())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// describeSandbox is what gateway check says of the agents' sandbox: a
// comment line for the setting and one per agent (the demo agent, then
// agents.list), and an error when gateway run would refuse to start.
func describeSandbox(cfg config.Config) ([]string, error) {
	names := []string{config.DemoAgent}
	for _, n := range slices.Sorted(maps.Keys(cfg.Agents.List)) {
		if n != config.DemoAgent {
			names = append(names, n)
		}
	}
	mode := cfg.Agents.Sandbox
	var lines []string
	var what string
	var refused error
	switch path, err := sandboxProbe(); {
	case mode == sandbox.Off:
		lines = append(lines, fmt.Sprintf("# agents.sandbox: %s: agents run unsandboxed, as the gateway's user (a warning in the log and /readyz)", mode))
		what = "not sandboxed (agents.sandbox: off)"
	case err != nil:
		refused = noSandbox(cfg, err)
		lines = append(lines, fmt.Sprintf("# agents.sandbox: %s: no sandbox can be had on this machine (%s): gateway run refuses to start", mode, strings.TrimPrefix(err.Error(), "sandbox: ")))
		what = "no sandbox"
	default:
		lines = append(lines, fmt.Sprintf("# agents.sandbox: %s: bubblewrap (%s works on this machine)", mode, path))
		what = "sandboxed (bubblewrap)"
	}
	for _, n := range names {
		spec, _ := cfg.AgentSpec(n)
		net := cfg.AgentNetwork(n)
		line := fmt.Sprintf("# agent %s: %s, network %s", n, what, net.Mode)
		if len(net.Allow) > 0 {
			line += " (allow " + strings.Join(net.Allow, " ") + ")"
		}
		if spec.Sandbox == nil {
			line += " (not enforced: no sandbox)"
		} else {
			line += ", home " + spec.Sandbox.Home
		}
		lines = append(lines, line)
	}
	return lines, refused
}
