package egress

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestRunInsideStatus: sandbox-exec exits with its command's status,
// 128+N for a signal N, and its own statuses for its own failures.
func TestRunInsideStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		want   int
		stdout string
		stderr string
	}{
		{"status", []string{"--mode=none", "--", "sh", "-c", "exit 3"}, "", 3, "", ""},
		{"signal", []string{"--mode=none", "--", "sh", "-c", "kill -TERM $$"}, "", 128 + 15, "", ""},
		{"stdio", []string{"--mode=none", "--", "sh", "-c", `read x; echo "out $x"; echo "err $x" >&2`}, "hello\n", 0, "out hello\n", "err hello\n"},
		{"proxy variables cleared in mode none", []string{"--mode=none", "--", "sh", "-c", `echo "[$HTTP_PROXY$https_proxy$NO_PROXY]"`}, "", 0, "[]\n", ""},
		{"not found", []string{"--mode=none", "--", "/nonexistent/agent"}, "", 127, "", "sandbox-exec:"},
		{"no separator", []string{"--mode=none", "sh"}, "", 125, "", "want FLAGS -- COMMAND"},
		{"no command", []string{"--mode=none", "--"}, "", 125, "", "no command after --"},
		{"bad flag", []string{"--mod=none", "--", "true"}, "", 125, "", "flag provided but not defined"},
		{"bad mode", []string{"--mode=open", "--", "true"}, "", 125, "", `mode: must be one of full allow none, got "open"`},
		{"no socket", []string{"--mode=full", "--", "true"}, "", 125, "", "--socket is needed"},
		{"bad entry", []string{"--socket=/x", "--mode=allow", "--allow=nope", "--", "true"}, "", 125, "", `allow[0]: "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HTTP_PROXY", "http://corp.example:3128")
			t.Setenv("https_proxy", "http://corp.example:3128")
			var stdout, stderr strings.Builder
			got := RunInside(t.Context(), tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
			if got != tc.want {
				t.Errorf("RunInside(%q) = %d, want %d (stderr %q)", tc.args, got, tc.want, stderr.String())
			}
			if stdout.String() != tc.stdout {
				t.Errorf("stdout = %q, want %q", stdout.String(), tc.stdout)
			}
			if !strings.Contains(stderr.String(), tc.stderr) || tc.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr = %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
}

// TestRunInsideForwardsSIGTERM: SIGTERM to sandbox-exec reaches the
// agent, whose own status (it handles the signal) is sandbox-exec's.
func TestRunInsideForwardsSIGTERM(t *testing.T) {
	cmd := exec.Command(os.Args[0], "sandbox-exec", "--mode=none", "--", os.Args[0], "waitsig")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("agent said %q, %v; want ready", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := cmd.ProcessState.ExitCode(); got != 7 {
		t.Errorf("sandbox-exec exited %d (%v), want 7, the agent's status after its SIGTERM", got, cmd.ProcessState)
	}
}

// TestInsideArgsRoundTrip: what InsideArgs writes, sandbox-exec reads.
func TestInsideArgsRoundTrip(t *testing.T) {
	p := Policy{Mode: "allow", Allow: []string{"api.anthropic.com:443", "[::1]:8080"}, Deny: []string{"127.0.0.1:4222"}}
	args := append(InsideArgs("/run/gw/egress.sock", p), "--", "claude-agent-acp", "--flag")
	c, err := parseInsideArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	if c.socket != "/run/gw/egress.sock" || c.policy.Mode != p.Mode || !slices.Equal(c.policy.Allow, p.Allow) || !slices.Equal(c.cmd, []string{"claude-agent-acp", "--flag"}) {
		t.Errorf("parseInsideArgs(InsideArgs(...)) = %+v", c)
	}
}

func FuzzInsideArgs(f *testing.F) {
	f.Add("/s.sock", "full", "api.anthropic.com:443\n127.0.0.1:18601", "agent\n-x")
	f.Add("", "none", "", "--")
	f.Add("/s", "allow", "[::1]:1", "--mode=full")
	f.Fuzz(func(t *testing.T, sock, mode, allow, cmd string) {
		p := Policy{Mode: mode}
		if allow != "" {
			p.Allow = strings.Split(allow, "\n")
		}
		argv := strings.Split(cmd, "\n")
		args := append(append(InsideArgs(sock, p), "--"), argv...)
		c, err := parseInsideArgs(args)
		valid := p.Validate() == nil && (p.mode() == ModeNone || sock != "") && argv[0] != ""
		if valid != (err == nil) {
			t.Fatalf("parseInsideArgs(%q) = %v; the policy valid: %v", args, err, valid)
		}
		if err == nil && (c.socket != sock || c.policy.mode() != p.mode() || !slices.Equal(c.policy.Allow, p.Allow) || !slices.Equal(c.cmd, argv)) {
			t.Fatalf("parseInsideArgs(%q) = %+v, want %q %+v %q", args, c, sock, p, argv)
		}
		// Arbitrary arguments never panic.
		parseInsideArgs(argv)
		plan(c.policy)
		Hosts(c.policy)
	})
}

// TestNoProxyNamesLoopback: NO_PROXY inside names the loopback addresses
// one by one, not only as a CIDR range, which clients that match names
// only (Bun, so opencode) skip and then proxy their own loopback server.
func TestNoProxyNamesLoopback(t *testing.T) {
	entries := strings.Split(noProxy, ",")
	for _, want := range []string{"localhost", "127.0.0.1", "::1", "127.0.0.0/8"} {
		if !slices.Contains(entries, want) {
			t.Errorf("NO_PROXY inside is %q: %s is not an entry of its own", noProxy, want)
		}
	}
}
