package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/internal/golden"
	"github.com/google/go-cmp/cmp"
)

var updateCheck = flag.Bool("update-check", false, "rewrite testdata/check/*.txtar from the current output of gateway check")

// TestCheckGolden runs `gateway check` over testdata/check/*.txtar: each
// holds an optional gateway.yaml, env (K=V lines, over a fixed HOME and
// XDG_STATE_HOME), args (more flags for check, one a line) and explain
// (one scope a line), and the recorded output: stdout, stderr and the exit
// status of check, and of check --explain for each scope. The output is
// compared byte for byte: the texts of valid configurations, of every
// error and of every explanation are part of the interface.
func TestCheckGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/check/*.txtar")
	if len(files) < 30 {
		t.Fatalf("found %d check cases, want at least 30", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			path, err := filepath.Abs(file)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := golden.Parse(string(data))
			got := checkCase(t, a)
			if *updateCheck {
				for _, name := range got.order {
					a.Set(name, got.out[name])
				}
				if err := os.WriteFile(path, []byte(a.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range got.order {
				want, ok := a.Get(name)
				if !ok {
					t.Errorf("no %q section (run with -update-check to record it)", name)
					continue
				}
				if diff := cmp.Diff(want, got.out[name]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

type checkOutput struct {
	order []string
	out   map[string]string
}

func (o *checkOutput) add(name, text string) {
	o.order = append(o.order, name)
	o.out[name] = text
}

// checkCase runs check (and check --explain per scope) in a directory of
// its own with the case's file and environment.
func checkCase(t *testing.T, a *golden.Archive) checkOutput {
	t.Chdir(t.TempDir())
	// What this machine has is not part of the output: a case says
	// GATEWAY_TEST_NO_SANDBOX=why in its env for a machine without one.
	probe := sandboxProbe
	t.Cleanup(func() { sandboxProbe = probe })
	sandboxProbe = func() (string, error) {
		if why := os.Getenv("GATEWAY_TEST_NO_SANDBOX"); why != "" {
			return "", errors.New("sandbox: " + why)
		}
		return "/usr/bin/bwrap", nil
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GATEWAY_") && !strings.HasPrefix(k, "GATEWAY_TEST_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("HOME", "/home/test")
	t.Setenv("XDG_STATE_HOME", "/state")
	for _, line := range lines(a.Section("env")) {
		k, v, _ := strings.Cut(line, "=")
		t.Setenv(k, v)
	}
	if y, ok := a.Get("gateway.yaml"); ok {
		if err := os.WriteFile("gateway.yaml", []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"check"}, lines(a.Section("args"))...)
	o := checkOutput{out: map[string]string{}}
	record := func(prefix string, args []string) {
		out, errOut, err := runCLI(t, "", args...)
		o.add(prefix+"stdout", out)
		o.add(prefix+"stderr", errOut)
		code := exitStatus(err, &strings.Builder{})
		o.add(prefix+"exit", fmt.Sprintln(code))
	}
	record("", args)
	for _, scope := range lines(a.Section("explain")) {
		record("explain "+scope+" ", append(args[:len(args):len(args)], "--explain", scope))
	}
	return o
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
