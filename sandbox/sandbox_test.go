package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpgw/gateway/internal/sandboxtest"
	"github.com/acpgw/gateway/sandbox"
	"github.com/acpgw/gateway/sandbox/egress"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(egress.RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	switch os.Getenv("SANDBOX_TEST_AGENT") {
	case "net":
		probeNet()
		os.Exit(0)
	case "hostile":
		hostile()
		os.Exit(0)
	case "tree":
		tree()
	case "child":
		os.Stdout.WriteString("ready\n") // running: its environ is its own
		select {}                        // until killed
	}
	os.Exit(m.Run())
}

// secret is what the gateway's stand-ins hold: its environment, its
// files.
const secret = "s3cret-of-the-gateway-7f3a9c"

// hostile is the agent that looks for what is not its own, and says what
// it found: "LEAK what" for each thing it reached, "OK what" for each
// thing of its own it could use.
func hostile() {
	environs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, f := range environs {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), secret) {
			fmt.Println("LEAK", f)
		}
	}
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "gateway-stand-in") {
			fmt.Println("LEAK the gateway's process", f)
		}
	}
	for _, f := range filepath.SplitList(os.Getenv("PROBE_FILES")) {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), secret) {
			fmt.Println("LEAK", f)
		}
		if entries, err := os.ReadDir(filepath.Dir(f)); err == nil && len(entries) > 0 && strings.Contains(f, "other") {
			fmt.Println("LEAK the directory of", f)
		}
	}
	for _, a := range strings.Fields(os.Getenv("PROBE_TCP")) {
		if c, err := net.DialTimeout("tcp", a, 2*time.Second); err == nil {
			c.Close()
			fmt.Println("LEAK tcp", a)
		}
	}
	for _, s := range filepath.SplitList(os.Getenv("PROBE_UNIX")) {
		if c, err := net.Dial("unix", s); err == nil {
			c.Close()
			fmt.Println("LEAK unix", s)
		}
	}
	// What is its own.
	if c, err := net.Dial("unix", os.Getenv("OWN_SOCKET")); err == nil {
		c.Close()
		fmt.Println("OK socket")
	} else {
		fmt.Println("NO socket", err)
	}
	for _, d := range []string{os.Getenv("OWN_WORKSPACE"), os.Getenv("HOME"), os.TempDir()} {
		if err := os.WriteFile(filepath.Join(d, "probe.txt"), []byte("mine"), 0o600); err == nil {
			fmt.Println("OK write", d)
		} else {
			fmt.Println("NO write", d, err)
		}
	}
	if wd, _ := os.Getwd(); wd == os.Getenv("OWN_WORKSPACE") {
		fmt.Println("OK cwd")
	}
}

// tree starts a child in a session of its own that lives until killed,
// says so, and then exits (or, with TREE_STAY, waits to be stopped).
func tree() {
	exe, _ := os.Executable()
	c := exec.Command(exe)
	c.Env = append(os.Environ(), "SANDBOX_TEST_AGENT=child")
	c.Stdout = os.Stdout
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		fmt.Println("cannot start the child:", err)
		os.Exit(1)
	}
	fmt.Println("spawned")
	if os.Getenv("TREE_STAY") != "" {
		select {}
	}
	os.Exit(0)
}

// gatewayLayout is a data directory, configuration file and the rest of a
// gateway, laid out inside a directory the agent is given read-only (so
// that only the masks keep them out).
type gatewayLayout struct {
	root, data, config, events   string
	workspace, home, otherSocket string
	ownSocket                    string
	files                        []string // hold the secret
}

func layout(t *testing.T) gatewayLayout {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	l := gatewayLayout{
		root: root, data: data,
		config:    filepath.Join(root, "gateway.yaml"),
		events:    filepath.Join(root, "events"),
		workspace: filepath.Join(data, "workspaces", "web", "c", "t1"),
		home:      filepath.Join(data, "agent-home", "hostile"),
	}
	for path, body := range map[string]string{
		filepath.Join(data, "gateway.db"): "transcript " + secret,
		l.config:                          "token: " + secret,
		filepath.Join(l.events, "session.ndjson"):                   secret,
		filepath.Join(data, "workspaces", "web", "c", "other", "f"): secret,
		filepath.Join(data, "agent-home", "other", "creds"):         secret,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		l.files = append(l.files, path)
	}
	if err := os.MkdirAll(l.workspace, 0o700); err != nil {
		t.Fatal(err)
	}
	mcp := filepath.Join(data, "mcp")
	os.MkdirAll(mcp, 0o700)
	l.ownSocket = listenUnix(t, filepath.Join(mcp, "own.sock"))
	l.otherSocket = listenUnix(t, filepath.Join(mcp, "other.sock"))
	return l
}

// serve listens on network's addr until the test ends, answering each
// connection with answer, and returns the listener's address.
func serve(t *testing.T, network, addr string, answer func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			answer(c)
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func listenUnix(t *testing.T, path string) string {
	t.Helper()
	return serve(t, "unix", path, func(net.Conn) {})
}

// listenTCP is one of the gateway's listeners (web chat, metrics, NATS).
func listenTCP(t *testing.T, addr string) string {
	t.Helper()
	return serve(t, "tcp", addr, func(net.Conn) {})
}

// standIn starts a process holding secret in its environment, as the
// gateway holds its tokens.
func standIn(t *testing.T) {
	t.Helper()
	exe, _ := os.Executable()
	c := exec.Command(exe, "gateway-stand-in")
	c.Env = []string{"SANDBOX_TEST_AGENT=child", "DISCORD_TOKEN=" + secret}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	// Read before it said so, environ may still be this test's own (the
	// fork before the exec).
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("the stand-in did not start: %v", err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", c.Process.Pid))
	if err != nil || !strings.Contains(string(b), secret) {
		t.Fatalf("the stand-in's environ does not hold the secret (%v): the probe would prove nothing", err)
	}
}

func hostileEnv(l gatewayLayout, tcp []string) []string {
	return []string{
		"SANDBOX_TEST_AGENT=hostile", "PATH=/usr/bin:/bin", "HOME=/root",
		"PROBE_FILES=" + strings.Join(l.files, string(filepath.ListSeparator)),
		"PROBE_TCP=" + strings.Join(tcp, " "),
		"PROBE_UNIX=" + l.otherSocket,
		"OWN_SOCKET=" + l.ownSocket,
		"OWN_WORKSPACE=" + l.workspace,
	}
}

// hostIP is an address of this host other than loopback, "" if none.
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// TestHostileAgentFindsNothing runs the hostile agent in a sandbox whose
// operator gave it, read-only, the directory that holds all of a
// gateway's data: it finds no secret (no gateway process, no data
// directory, configuration, event log, other workspace or other agent's
// home), reaches no listener of the host nor another session's socket,
// and can use its own workspace, home, /tmp and socket.
func TestHostileAgentFindsNothing(t *testing.T) {
	sandboxtest.Require(t)
	l := layout(t)
	standIn(t)
	tcp := []string{listenTCP(t, "127.0.0.1:0"), listenTCP(t, "[::1]:0")}
	if ip := hostIP(); ip != "" {
		tcp = append(tcp, listenTCP(t, net.JoinHostPort(ip, "0")))
	}
	exe, _ := os.Executable()
	spec := sandbox.Spec{
		Home:      l.home,
		ReadOnly:  []string{l.root},
		Hide:      []string{l.data, l.config, l.events},
		Exe:       exe,
		Workspace: l.workspace,
		Sockets:   []string{l.ownSocket},
	}
	env := hostileEnv(l, tcp)
	t.Run("unsandboxed the probe finds it all", func(t *testing.T) {
		out := run(t, exec.Command(exe), env)
		for _, want := range []string{"LEAK /proc/", "LEAK the gateway's process", "LEAK " + l.config, "LEAK tcp " + tcp[0], "LEAK unix " + l.otherSocket} {
			if !strings.Contains(out, want) {
				t.Errorf("without a sandbox the probe did not report %q:\n%s", want, out)
			}
		}
	})
	w, err := spec.Wrap(t.Context(), sandbox.Proc{Command: []string{exe}, Env: env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := run(t, exec.Command(w.Args[0], w.Args[1:]...), w.Env)
	if strings.Contains(out, "LEAK") || strings.Contains(out, "NO ") {
		t.Errorf("the sandboxed agent reached what is not its own, or not what is:\n%s\nmounts:\n%s", out, strings.Join(w.Mounts, "\n"))
	}
	for _, want := range []string{"OK socket", "OK write " + l.workspace, "OK write " + l.home, "OK write /tmp", "OK cwd"} {
		if !strings.Contains(out, want) {
			t.Errorf("the sandboxed agent did not say %q:\n%s", want, out)
		}
	}
	for _, d := range []string{l.workspace, l.home} {
		if b, err := os.ReadFile(filepath.Join(d, "probe.txt")); err != nil || string(b) != "mine" {
			t.Errorf("what the agent wrote in %s is not on the host: %q, %v", d, b, err)
		}
	}
}

// run runs c with env and returns its output.
func run(t *testing.T, c *exec.Cmd, env []string) string {
	t.Helper()
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", c.Args, err, out)
	}
	return string(out)
}

// TestProcessTreeEndsWithTheAgent: a child the agent started in a session
// of its own (setsid, which leaves the agent's process group) ends when the
// agent exits, and when the agent is stopped by a signal to its process
// group (as agent.Process.Stop does): it held the agent's stdout, which
// then closes.
func TestProcessTreeEndsWithTheAgent(t *testing.T) {
	sandboxtest.Require(t)
	for _, tc := range []struct {
		name string
		stay bool
	}{{"agent exits", false}, {"agent stopped", true}} {
		t.Run(tc.name, func(t *testing.T) {
			exe, _ := os.Executable()
			env := []string{"SANDBOX_TEST_AGENT=tree", "PATH=/usr/bin:/bin"}
			if tc.stay {
				env = append(env, "TREE_STAY=1")
			}
			spec := sandbox.Spec{Exe: exe, Workspace: t.TempDir()}
			w, err := spec.Wrap(t.Context(), sandbox.Proc{Command: []string{exe}, Env: env}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			c := exec.Command(w.Args[0], w.Args[1:]...)
			c.Env = w.Env
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			r, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			c.Stdout, c.Stderr = wr, wr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			wr.Close()
			defer c.Process.Kill()
			br := bufio.NewReader(r)
			line, err := br.ReadString('\n')
			if err != nil || line != "spawned\n" {
				t.Fatalf("the agent said %q, %v", line, err)
			}
			if tc.stay {
				syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
			}
			c.Wait()
			// The child holds the pipe while it lives.
			r.SetReadDeadline(time.Now().Add(20 * time.Second))
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatalf("the agent's child outlived it (its stdout still open: %v); it wrote %q", err, rest)
			}
		})
	}
}

// TestWrapRefuses: a workspace that is the whole machine, or one of the
// gateway's own paths, is refused, saying what to change.
func TestWrapRefuses(t *testing.T) {
	sandboxtest.Require(t)
	_, err := sandbox.Spec{Workspace: "/"}.Wrap(context.Background(), sandbox.Proc{Command: []string{"/bin/true"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "agents.list.NAME.cwd") {
		t.Errorf("got %v, want the workspace / refused", err)
	}
	data := t.TempDir()
	_, err = sandbox.Spec{Workspace: data, Hide: []string{data}}.Wrap(context.Background(), sandbox.Proc{Command: []string{"/bin/true"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "one of the gateway's own paths") {
		t.Errorf("got %v, want the data directory refused as a workspace", err)
	}
}

// probeNet dials each of PROBE_TCP directly and reads what the server
// says first; and asks the proxy of its environment (HTTPS_PROXY) for a
// tunnel to each of PROBE_CONNECT. It prints "REACHED addr: what" or
// "NOT addr".
func probeNet() {
	read := func(c net.Conn) string {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(c, 64))
		return string(b)
	}
	for _, a := range strings.Fields(os.Getenv("PROBE_TCP")) {
		c, err := net.DialTimeout("tcp", a, 5*time.Second)
		if err != nil {
			fmt.Println("NOT", a)
			continue
		}
		if got := read(c); got != "" {
			fmt.Printf("REACHED %s: %s\n", a, got)
		} else {
			fmt.Println("NOT", a)
		}
		c.Close()
	}
	proxy := strings.TrimPrefix(os.Getenv("HTTPS_PROXY"), "http://")
	for _, a := range strings.Fields(os.Getenv("PROBE_CONNECT")) {
		c, err := net.DialTimeout("tcp", proxy, 5*time.Second)
		if err != nil {
			fmt.Println("NOT", a, "(no proxy:", err, ")")
			continue
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", a, a)
		got := read(c)
		if strings.HasPrefix(got, "HTTP/1.1 200") {
			fmt.Printf("REACHED %s: %q\n", a, got)
		} else {
			fmt.Println("NOT", a)
		}
		c.Close()
	}
}

// greeter is a listener of the host that says what it is to whoever
// connects.
func greeter(t *testing.T, what string) string {
	t.Helper()
	return serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) { io.WriteString(c, what) })
}

// TestNetworkPolicy: with network none the agent reaches no listener of
// the host; with allow, exactly the allowed one (through its forwarder
// inside, by its address) and never a denied one (the gateway's own
// listener, even when allowed); with full, no listener of the host it was
// not given, also through the proxy.
func TestNetworkPolicy(t *testing.T) {
	sandboxtest.Require(t)
	api := greeter(t, "model-api")
	web := greeter(t, "gateway-web")
	other := greeter(t, "host-service")
	exe, _ := os.Executable()
	for _, tc := range []struct {
		name    string
		net     sandbox.Network
		reached []string
	}{
		{"none", sandbox.Network{Mode: sandbox.NetNone}, nil},
		{"allow", sandbox.Network{Mode: sandbox.NetAllow, Allow: []string{api, web}, Deny: []string{web}}, []string{api}},
		{"full", sandbox.Network{Mode: sandbox.NetFull, Allow: []string{api}, Deny: []string{web}}, []string{api}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := sandbox.Spec{Exe: exe, Workspace: t.TempDir(), Network: tc.net}
			env := []string{"SANDBOX_TEST_AGENT=net", "PATH=/usr/bin:/bin", "PROBE_TCP=" + strings.Join([]string{api, web, other}, " ")}
			if tc.net.Mode != sandbox.NetNone {
				env = append(env, "PROBE_CONNECT="+strings.Join([]string{api, web, other}, " "))
			}
			w, err := spec.Wrap(t.Context(), sandbox.Proc{Command: []string{exe}, Env: env}, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := run(t, exec.Command(w.Args[0], w.Args[1:]...), w.Env)
			t.Logf("the agent says:\n%s", out)
			if err := w.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			var reached []string
			for _, l := range strings.Split(out, "\n") {
				if rest, ok := strings.CutPrefix(l, "REACHED "); ok {
					reached = append(reached, rest)
				}
			}
			want := map[string]bool{}
			for _, a := range tc.reached {
				want[a] = true
			}
			for _, r := range reached {
				addr, _, _ := strings.Cut(r, ": ")
				if !want[addr] {
					t.Errorf("the agent reached %s:\n%s", r, out)
				}
			}
			for a := range want {
				if !strings.Contains(out, "REACHED "+a+": model-api") {
					t.Errorf("the agent did not reach the allowed %s directly:\n%s", a, out)
				}
			}
		})
	}
}
