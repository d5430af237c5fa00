package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

const stream = "../../replay/testdata/streams/claude-agent-acp.three-tools.ndjson"

func TestReplayCommand(t *testing.T) {
	out, stderr, err := runCLI(t, "", "replay", "--limits", "discord", "--summary", stream)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last struct {
		Op    string `json:"op"`
		Turns int    `json:"turns"`
		Sends int    `json:"sends"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Op != "summary" || last.Turns != 1 || last.Sends == 0 {
		t.Errorf("summary = %+v", last)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %q", l)
		}
	}
	// Deterministic.
	again, _, _ := runCLI(t, "", "replay", "--limits", "discord", "--summary", stream)
	if again != out {
		t.Error("two runs of the same replay differ")
	}
}

func TestReplayStdinAndMalformed(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}
garbage
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}
{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}
`
	out, stderr, err := runCLI(t, in, "replay", "--limits", "none", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"text":"hi"`) || !strings.Contains(out, `"op":"turn_end"`) {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(stderr, "line 2: skipped") {
		t.Errorf("stderr does not report the malformed line:\n%s", stderr)
	}
}

func TestReplayFlags(t *testing.T) {
	withEdit, _, err := runCLI(t, "", "replay", "--limits", "web", stream)
	if err != nil {
		t.Fatal(err)
	}
	noEdit, _, err := runCLI(t, "", "replay", "--limits", "web", "--no-edit", stream)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(withEdit, `"op":"edit"`) || strings.Contains(noEdit, `"op":"edit"`) {
		t.Error("--no-edit did not remove editing")
	}
	verbose, _, err := runCLI(t, "", "replay", "--set", "acp.stream.metaMode=off", stream)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(verbose, `"kind":"tool"`) {
		t.Error("--set acp.stream.metaMode=off still shows tool lines")
	}
}

func TestReplayErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--limits", "irc", stream}, `--limits must be one of discord, slack, web, none, got "irc"`},
		{[]string{"replay", "--set", "acp.stream.metaMode=quiet", stream}, `acp.stream.metaMode: must be one of off minimal verbose, got "quiet"`},
		{[]string{"replay"}, "want exactly one STREAM.ndjson"},
		{[]string{"replay", "missing.ndjson"}, "no such file"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		_, _, err := runCLI(t, "", tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestDemoAgentCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"demo-agent", "--help"}, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("demo-agent --help: %v", err)
	}
	if !strings.Contains(out.String(), "--state-dir") {
		t.Errorf("help = %q", out.String())
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), []string{"demo-agent", "--state-dir", t.TempDir()}, inR, outW, &errb)
		outW.Close()
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if !strings.Contains(line, `"loadSession":true`) || !strings.Contains(line, `"id":1`) {
		t.Errorf("initialize answer = %q", line)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("demo-agent: %v (stderr %s)", err, errb.String())
	}
}
