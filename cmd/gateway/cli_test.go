package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

// --help, -h and help print the command list and succeed; a command's own
// --help prints its flags and succeeds too.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		out, errOut, err := runCLI(t, "", args...)
		if err != nil || exitStatus(err, &bytes.Buffer{}) != 0 {
			t.Errorf("%v: err = %v, want success", args, err)
		}
		if out != usage {
			t.Errorf("%v printed %q (stderr %q), want the command list", args, out, errOut)
		}
	}
	_, errOut, err := runCLI(t, "", "run", "--help")
	if !strings.Contains(errOut, "-config") {
		t.Errorf("run --help printed %q, want the run flags", errOut)
	}
	var said bytes.Buffer
	if code := exitStatus(err, &said); code != 0 || said.Len() != 0 {
		t.Errorf("run --help: exit status %d and %q, want 0 and nothing more", code, said.String())
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		said string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{exitCode(1), 1, ""},
		{os.ErrPermission, 2, "gateway: permission denied\n"},
	} {
		var said bytes.Buffer
		if code := exitStatus(tc.err, &said); code != tc.code || said.String() != tc.said {
			t.Errorf("exitStatus(%v) = %d, %q; want %d, %q", tc.err, code, said.String(), tc.code, tc.said)
		}
	}
}

// A configuration file that does not exist is named as such, not called
// invalid.
func TestConfigFileNotFound(t *testing.T) {
	t.Chdir(t.TempDir())
	_, errOut, err := runCLI(t, "", "check", "--config", "x.yaml")
	var ex exitCode
	if !asExit(err, &ex) || ex != 1 {
		t.Errorf("check: err = %v, want exit status 1", err)
	}
	if want := "gateway check: config file \"x.yaml\" not found\n"; errOut != want {
		t.Errorf("check said %q, want %q", errOut, want)
	}
	for _, cmd := range []string{"run", "replay"} {
		args := []string{cmd, "--config", "x.yaml"}
		if cmd == "replay" {
			args = append(args, stream)
		}
		_, _, err := runCLI(t, "", args...)
		if err == nil || err.Error() != `config file "x.yaml" not found` {
			t.Errorf("%s: err = %v, want config file \"x.yaml\" not found", cmd, err)
		}
	}
}

// check --explain prints the explanation alone, with one header.
func TestCheckExplain(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("gateway.yaml", []byte("channels:\n  discord:\n    token: secret-token\noverrides:\n  discord:\n    guilds:\n      g1:\n        busy: interrupt\n"), 0o600)
	out, errOut, err := runCLI(t, "", "check", "--explain", "discord/g1/c1")
	if err != nil {
		t.Fatalf("check --explain: %v\n%s", err, errOut)
	}
	if !strings.HasPrefix(out, "# effective settings for discord, guild g1, channel c1\n# file: gateway.yaml\n") {
		t.Errorf("the output does not start with the explanation's header:\n%s", out)
	}
	if n := strings.Count(out, "effective settings"); n != 1 {
		t.Errorf("the header is there %d times, want once:\n%s", n, out)
	}
	for _, notWant := range []string{"valid", "dataDir", "channels:", "secret-token"} {
		if strings.Contains(out, notWant) {
			t.Errorf("the explanation shows %q, which belongs to the whole configuration:\n%s", notWant, out)
		}
	}
	if !strings.Contains(out, "busy: interrupt # overrides.discord.guilds.g1") {
		t.Errorf("the explanation lacks the guild's override:\n%s", out)
	}
}

// A replay in which no line is a JSON-RPC message fails with the count.
func TestReplayAllMalformed(t *testing.T) {
	out, errOut, err := runCLI(t, "garbage\n{\"half\":\n", "replay", "-")
	want := "replay: all 2 lines are malformed: the input is not an ACP event log (one JSON-RPC message per line)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if code := exitStatus(err, &bytes.Buffer{}); code == 0 {
		t.Error("exit status 0")
	}
	if out != "" || strings.Count(errOut, ": skipped:") != 2 {
		t.Errorf("stdout %q, stderr %q; want nothing, and both lines reported", out, errOut)
	}
}
