package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a helper: "sandbox-exec ARGS" runs
// RunInside, "client PROBES" runs probes, "waitsig" waits for SIGTERM.
const helperEnv = "EGRESS_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" && len(os.Args) > 1 {
		switch os.Args[1] {
		case "sandbox-exec":
			os.Exit(RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "client":
			os.Exit(client(os.Args[2:]))
		case "waitsig":
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGTERM)
			fmt.Println("ready")
			<-sigs
			os.Exit(7)
		}
	}
	os.Exit(m.Run())
}

// client runs each probe ("KIND TARGET") and prints "PROBE => RESULT".
// Kinds: get (no proxy), proxyget (HTTP_PROXY, absolute URI), connect
// (CONNECT through HTTP_PROXY, then GET / in the tunnel), env (the proxy
// variable's presence).
func client(probes []string) int {
	proxy := os.Getenv("HTTP_PROXY")
	for _, p := range probes {
		kind, target, _ := strings.Cut(p, " ")
		var res string
		switch kind {
		case "get":
			res = fetch(&http.Transport{Proxy: nil}, target)
		case "proxyget":
			u, err := url.Parse(proxy)
			if err != nil || proxy == "" {
				res = "no proxy"
				break
			}
			res = fetch(&http.Transport{Proxy: http.ProxyURL(u)}, target)
		case "connect":
			res = connectProbe(proxy, target)
		case "env":
			if proxy == "" {
				res = "no proxy"
			} else {
				res = "proxy " + os.Getenv("NO_PROXY") + " node " + os.Getenv("NODE_USE_ENV_PROXY")
			}
		}
		fmt.Printf("%s => %s\n", p, res)
	}
	return 0
}

func fetch(tr *http.Transport, u string) string {
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return "error"
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Sprint(resp.StatusCode)
	}
	return "ok " + string(b)
}

func connectProbe(proxy, dest string) string {
	u, err := url.Parse(proxy)
	if err != nil || proxy == "" {
		return "no proxy"
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return "error"
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "error"
	}
	if resp.StatusCode != 200 {
		return fmt.Sprint(resp.StatusCode)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", dest)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		return "error"
	}
	b, _ := io.ReadAll(inner.Body)
	return "ok " + string(b)
}

// needBwrap is bwrap's path; without it the test skips, or fails in CI.
func needBwrap(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap is needed for the sandbox tests (CI is set): %v", err)
		}
		t.Skipf("bwrap not found (install bubblewrap to run the network namespace tests): %v", err)
	}
	return path
}

// runSandboxed runs the test binary as sandbox-exec for p in a bwrap
// sandbox with its own network namespace (as the sandbox package starts
// an agent), the proxy's socket bound in and Hosts(p) as /etc/hosts, and
// the client probes as its command. It returns the probes' results.
func runSandboxed(t *testing.T, sock string, p Policy, probes []string) map[string]string {
	t.Helper()
	bwrap := needBwrap(t)
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, Hosts(p), 0o644); err != nil {
		t.Fatal(err)
	}
	sockDir := filepath.Dir(sock)
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--die-with-parent",
		"--bind", sockDir, sockDir, "--ro-bind", hosts, "/etc/hosts", "--", os.Args[0], "sandbox-exec"}
	args = append(args, InsideArgs(sock, p)...)
	args = append(args, "--", os.Args[0], "client")
	args = append(args, probes...)
	cmd := exec.CommandContext(t.Context(), bwrap, args...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sandboxed client: %v\nstderr:\n%s", err, stderr.String())
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, " => ")
		got[k] = v
	}
	t.Logf("sandbox-exec's stderr:\n%s", stderr.String())
	return got
}

// TestSandboxedNetwork: in a real network namespace, an allowed fake model
// API on the host's loopback is reachable transparently (by address and
// by a name mapped by Hosts) and through HTTP_PROXY; another loopback
// port of the host (the web chat, metrics or NATS) is not, neither
// directly nor through the proxy; with mode none nothing is.
func TestSandboxedNetwork(t *testing.T) {
	needBwrap(t)
	api := serveText(t, "model-api", nil)
	web := serveText(t, "web-chat", nil)
	_, apiPort, _ := net.SplitHostPort(api)
	_, webPort, _ := net.SplitHostPort(web)
	named := "api.fake.test:" + apiPort

	for _, mode := range []string{"full", "allow"} {
		t.Run(mode, func(t *testing.T) {
			p := Policy{Mode: mode, Allow: []string{api, named}}
			x, sock := startProxy(t, p, nil)
			// The host resolves the fake name to its loopback, as a
			// name of a model API served on the host would.
			x.d.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
				if host == "api.fake.test" {
					return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
				}
				return lookup(ctx, host)
			}
			want := map[string]string{
				"env x":                                       "proxy " + noProxy + " node 1",
				"get http://" + api + "/":                     "ok model-api",
				"get http://" + named + "/":                   "ok model-api",
				"proxyget http://" + api + "/":                "ok model-api",
				"proxyget http://" + named + "/":              "ok model-api",
				"connect " + api:                              "ok model-api",
				"connect " + named:                            "ok model-api",
				"get http://" + web + "/":                     "error",
				"get http://localhost:" + webPort + "/":       "error",
				"proxyget http://" + web + "/":                "403",
				"proxyget http://localhost:" + webPort + "/":  "403",
				"connect " + web:                              "403",
				"connect localhost:" + webPort:                "403",
				"connect api.fake.test:" + webPort:            "403",
				"connect 169.254.169.254:80":                  "403",
				"proxyget http://api.fake.test:" + webPort:    "403",
				"get http://api.fake.test:" + webPort + "/":   "error",
				"connect [::ffff:127.0.0.1]:" + webPort:       "403",
				"connect 127.0.0.2:" + webPort:                "403",
				"connect 0.0.0.0:" + webPort:                  "403",
				"get http://0.0.0.0:" + webPort + "/":         "error",
				"get http://[::1]:" + webPort + "/":           "error",
				"connect [::1]:" + webPort:                    "403",
				"proxyget http://127.0.0.1:" + webPort + "/x": "403",
			}
			if mode == "allow" {
				want["connect 192.0.2.1:80"] = "403"
			}
			var probes []string
			for k := range want {
				probes = append(probes, k)
			}
			got := runSandboxed(t, sock, p, probes)
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s => %q, want %q", k, got[k], w)
				}
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		want := map[string]string{
			"env x":                        "no proxy",
			"get http://" + api + "/":      "error",
			"get http://" + web + "/":      "error",
			"proxyget http://" + api + "/": "no proxy",
		}
		var probes []string
		for k := range want {
			probes = append(probes, k)
		}
		// No proxy is started for mode none; the socket path names nothing.
		got := runSandboxed(t, filepath.Join(t.TempDir(), "none.sock"), Policy{Mode: "none"}, probes)
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s => %q, want %q", k, got[k], w)
			}
		}
	})
}
