package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Exit statuses of RunInside's own failures (as env(1) has them).
const (
	exitFailed   = 125 // sandbox-exec itself failed (bad arguments)
	exitNoExec   = 126 // the command could not be started
	exitNotFound = 127 // the command was not found
)

// proxyVars are the variables a client reads its proxy from; RunInside
// sets or clears every one.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY"}

// noProxy is NO_PROXY inside: the sandbox's own loopback, where the
// forwarders of the loopback Allow entries listen. A client that honours
// it connects to those directly (Go's never proxies loopback anyway);
// names of Allow entries go through the proxy, which resolves them on the
// host, and are reachable directly too through Hosts' mapping.
// 127.0.0.1 is listed by itself too, for clients that read the list as
// names only and skip the CIDR entry: opencode's runtime (Bun) sent its
// requests to its own server on 127.0.0.1 through the proxy, which
// refused them, and no session could start.
const noProxy = "localhost,127.0.0.1,::1,127.0.0.0/8"

// InsideArgs are the arguments of sandbox-exec for policy p, the host
// proxy listening on socketPath; the caller appends "--" and the command.
func InsideArgs(socketPath string, p Policy) []string {
	args := []string{"--socket=" + socketPath, "--mode=" + p.mode()}
	for _, a := range p.Allow {
		args = append(args, "--allow="+a)
	}
	return args
}

// insideConfig is what sandbox-exec's arguments say.
type insideConfig struct {
	socket string
	policy Policy
	cmd    []string
}

// parseInsideArgs parses InsideArgs' arguments, "--" and the command.
func parseInsideArgs(args []string) (insideConfig, error) {
	fs := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c insideConfig
	fs.StringVar(&c.socket, "socket", "", "the host proxy's unix socket")
	fs.StringVar(&c.policy.Mode, "mode", ModeNone, "full, allow or none")
	fs.Func("allow", "a host:port the policy allows (repeatable)", func(s string) error {
		c.policy.Allow = append(c.policy.Allow, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("sandbox-exec: %w", err)
	}
	c.cmd = fs.Args()
	if i := len(args) - len(c.cmd) - 1; i < 0 || args[i] != "--" {
		return c, errors.New("sandbox-exec: want FLAGS -- COMMAND [ARGS...]")
	}
	if len(c.cmd) == 0 || c.cmd[0] == "" {
		return c, errors.New("sandbox-exec: no command after --")
	}
	if err := c.policy.Validate(); err != nil {
		return c, fmt.Errorf("sandbox-exec: %w", err)
	}
	if c.policy.mode() != ModeNone && c.socket == "" {
		return c, fmt.Errorf("sandbox-exec: --socket is needed with mode %s", c.policy.mode())
	}
	return c, nil
}

// forward is one transparent forwarder inside: a listener that tunnels
// each connection to target through the host proxy.
type forward struct {
	listen netip.AddrPort
	target string // host:port, as CONNECT names it
}

// hostLine is a line of the sandbox's /etc/hosts.
type hostLine struct {
	addr netip.Addr
	name string
}

// firstNamed is the first loopback address given to a name of Allow; the
// next names get the addresses after it (127.0.0.1 stays the sandbox's
// own, for the proxy listener and the loopback entries).
var firstNamed = netip.AddrFrom4([4]byte{127, 0, 1, 1})

// plan lays out p's forwarders and the names Hosts maps, in Allow's
// order: a loopback IP entry listens on itself, a localhost name on
// 127.0.0.1, another name on an address of its own (one per name, every
// port of it there); other IP entries are reached through the proxy only
// (nothing inside can listen on them).
func plan(p Policy) ([]forward, []hostLine) {
	if p.mode() == ModeNone {
		return nil, nil
	}
	var entries []entry
	used := map[netip.Addr]bool{}
	for _, s := range p.Allow {
		e, err := parseEntry(s)
		if err != nil {
			continue
		}
		entries = append(entries, e)
		if !e.name() {
			used[e.ip] = true
		}
	}
	var fws []forward
	var lines []hostLine
	seen := map[netip.AddrPort]bool{}
	named := map[string]netip.Addr{}
	next := firstNamed
	for _, e := range entries {
		var at netip.Addr
		switch {
		case !e.name():
			if !e.ip.IsLoopback() {
				continue
			}
			at = e.ip
		case e.host == "localhost" || strings.HasSuffix(e.host, ".localhost"):
			at = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		default:
			var ok bool
			if at, ok = named[e.host]; !ok {
				for used[next] {
					next = next.Next()
				}
				at = next
				next = next.Next()
				named[e.host] = at
				lines = append(lines, hostLine{at, e.host})
			}
		}
		ap := netip.AddrPortFrom(at, e.port)
		if seen[ap] {
			continue
		}
		seen[ap] = true
		fws = append(fws, forward{listen: ap, target: e.String()})
	}
	return fws, lines
}

// Hosts returns the /etc/hosts content the sandbox gets: localhost lines, and
// each Allow entry's host name mapped to the loopback address its forwarder
// listens on inside (IP entries need no line).
func Hosts(p Policy) []byte {
	var b bytes.Buffer
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	_, lines := plan(p)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s\t%s\n", l.addr, l.name)
	}
	return b.Bytes()
}

// RunInside is sandbox-exec: what runs inside the sandbox's network
// namespace (which has only its own loopback) as the agent's parent,
// started as
//
//	<gateway executable> sandbox-exec <InsideArgs(...)...> -- <agent command...>
//
// It listens on 127.0.0.1:<port> inside for the proxy variables, and on a
// loopback address per Allow entry (the name mapped to it by Hosts), forwarding
// every connection to the host Proxy through socketPath (the socket is
// bind-mounted into the sandbox at the same path). It starts the agent command
// with HTTP_PROXY/HTTPS_PROXY/ALL_PROXY (and lower-case forms) pointing at its
// proxy listener (Mode "full" and "allow"), passes stdin/stdout/stderr through,
// forwards SIGTERM/SIGINT, and exits with the agent's exit status.
//
// It returns that status (128+N when a signal N ended the agent; 125 for
// bad arguments, 126 when the command cannot be started, 127 when it is
// not found). When ctx is done the agent is sent SIGTERM.
func RunInside(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseInsideArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	in := &inside{socket: c.socket, stderr: stderr, conns: map[net.Conn]bool{}, said: map[string]bool{}}
	defer in.close()
	env := withoutProxyVars(os.Environ())
	if c.policy.mode() != ModeNone {
		fws, _ := plan(c.policy)
		for _, fw := range fws {
			ln, err := net.Listen("tcp", fw.listen.String())
			if err != nil {
				fmt.Fprintf(stderr, "sandbox-exec: %s is reachable through the proxy only: %v\n", fw.target, err)
				continue
			}
			in.serve(ln, fw.target)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(stderr, "sandbox-exec: the proxy listener: %v\n", err)
			return exitFailed
		}
		in.serve(ln, "")
		url := "http://" + ln.Addr().String()
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
			env = append(env, k+"="+url, strings.ToLower(k)+"="+url)
		}
		env = append(env, "NO_PROXY="+noProxy, "no_proxy="+noProxy)
		if os.Getenv("NODE_USE_ENV_PROXY") == "" {
			// Node.js (22.21+, 24+) honours the proxy variables in its
			// own http and fetch only when asked to.
			env = append(env, "NODE_USE_ENV_PROXY=1")
		}
	}
	return in.run(ctx, c.cmd, env, stdin, stdout, stderr)
}

// withoutProxyVars is env without any proxy variable, in either case.
func withoutProxyVars(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range proxyVars {
			if strings.EqualFold(k, v) {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// inside holds sandbox-exec's listeners and connections.
type inside struct {
	socket string
	stderr io.Writer
	wg     sync.WaitGroup

	mu     sync.Mutex // guards the fields below
	lns    []net.Listener
	conns  map[net.Conn]bool
	said   map[string]bool // targets whose refusal was written to stderr
	closed bool
}

// run starts the command and waits for it, forwarding signals.
func (in *inside) run(ctx context.Context, argv, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// The agent dies with its parent: nothing outlives the wrapper.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "sandbox-exec: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitNoExec
	}
	done := make(chan struct{})
	var fwd sync.WaitGroup
	fwd.Go(func() {
		stop := ctx.Done()
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-stop:
				cmd.Process.Signal(syscall.SIGTERM)
				stop = nil
			case <-done:
				return
			}
		}
	})
	err := cmd.Wait()
	close(done)
	fwd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "sandbox-exec: %v\n", err)
		return exitFailed
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// serve accepts on ln: each connection goes to the host proxy, as it is
// (target "") or through a CONNECT to target.
func (in *inside) serve(ln net.Listener, target string) {
	in.mu.Lock()
	in.lns = append(in.lns, ln)
	in.mu.Unlock()
	in.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !in.track(c) {
				c.Close()
				return
			}
			in.wg.Go(func() {
				defer in.untrack(c)
				in.handle(c, target)
			})
		}
	})
}

// connectTimeout bounds the host proxy's answer to a forwarder's CONNECT
// (it resolves and dials first).
const connectTimeout = dialTimeout + lookupTimeout + 5*time.Second

// handle forwards one connection.
func (in *inside) handle(c net.Conn, target string) {
	u, err := net.Dial("unix", in.socket)
	if err != nil {
		in.say(target, fmt.Sprintf("sandbox-exec: the host proxy: %v", err))
		return
	}
	if !in.track(u) {
		u.Close()
		return
	}
	defer in.untrack(u)
	if target == "" {
		splice(c, u, 0)
		return
	}
	u.SetDeadline(time.Now().Add(connectTimeout))
	fmt.Fprintf(u, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(u)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		in.say(target, fmt.Sprintf("sandbox-exec: %s: the host proxy: %v", target, err))
		return
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		in.say(target, fmt.Sprintf("sandbox-exec: %s: %s: %s", target, resp.Status, strings.TrimSpace(string(b))))
		return
	}
	u.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := c.Write(b); err != nil {
			return
		}
	}
	splice(c, u, 0)
}

// say writes msg to stderr, once per target.
func (in *inside) say(target, msg string) {
	in.mu.Lock()
	first := !in.said[target] && len(in.said) < maxLogged
	in.said[target] = true
	in.mu.Unlock()
	if first {
		fmt.Fprintln(in.stderr, msg)
	}
}

// track records a connection so that close ends it; false once closed.
func (in *inside) track(c net.Conn) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return false
	}
	in.conns[c] = true
	return true
}

// untrack closes and forgets c.
func (in *inside) untrack(c net.Conn) {
	in.mu.Lock()
	delete(in.conns, c)
	in.mu.Unlock()
	c.Close()
}

// close ends every listener and connection and waits for their goroutines.
func (in *inside) close() {
	in.mu.Lock()
	in.closed = true
	for _, ln := range in.lns {
		ln.Close()
	}
	for c := range in.conns {
		c.Close()
	}
	in.mu.Unlock()
	in.wg.Wait()
}
