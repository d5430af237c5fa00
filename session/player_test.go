package session_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/internal/streamplayer"
	"github.com/acpgw/gateway/replay"
	"github.com/acpgw/gateway/session"
	"github.com/google/go-cmp/cmp"
)

// recordedWorkspace is the working directory of the recorded sessions
// (replay/testdata/streams/README.md).
const recordedWorkspace = "/workspace"

// notDriven are the recorded streams whose people's side the live
// comparison cannot drive, and why.
var notDriven = map[string]string{
	"synthetic.acp133-notice": "its notices are counted per minute of the lane's wall clock live (projector.NoticesPerMinute) and of the recording's times in replay: with both cores overloaded (CI, -race, -p 4) the live thread's minute can hold a different share of the flood. Its expectations and goldens are checked by the replay tests, the live order by TestAgentNoticesShown and agent/TestUpdatesAfterTheAnswerComeAfterTheTurn",
	"demo.questions":          "its questions (elicitation/create) are answered in a form the recording channel does not fill in; the comparison drives prompts, permission answers and stops",
}

// TestLiveMatchesReplay plays every recorded stream of
// replay/testdata/streams to a live gateway thread (the router, its
// thread owner, the real projector and lane into the recording adapter,
// with web's and Discord's limits) from a real agent subprocess, the
// stream player (internal/streamplayer), which answers the gateway's
// calls with the recorded answers and fails on any frame the recording
// does not have there (a permission answered otherwise, a call out of
// place). People act as the recording's client frames say: a prompt
// once the previous turn has ended, a click on the recorded option once
// the permission prompt is shown, a stop once the agent's last text
// before the recorded cancel is shown (or on a prompt answered
// "cancelled" by a stop). Then `gateway replay` (package replay, the
// same preset and policy) runs the same stream.
//
// What is compared is what people are left with (shown): each message
// in post order, its kind, key, buttons and final text (text posts,
// tool lines, permission prompts with their outcome, notices such as the
// stop), and the turns' ends with their stop reasons. The edit sequence
// is not: live, the edit throttle runs on the wall clock, so how many
// chunks one edit carries depends on timing; a replay's clock is
// virtual.
func TestLiveMatchesReplay(t *testing.T) {
	files, _ := filepath.Glob("../replay/testdata/streams/*.ndjson")
	if len(files) < 20 {
		t.Fatalf("found %d recorded streams", len(files))
	}
	presets := []struct {
		name   string
		limits channels.Limits
	}{
		{"web", web.Limits()},
		{"discord", discord.Limits()},
	}
	for _, file := range files {
		base := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		for _, p := range presets {
			t.Run(base+"/"+p.name, func(t *testing.T) {
				if why, ok := notDriven[base]; ok {
					t.Skip(why)
				}
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				// The recording's workspace becomes the live session's
				// working directory, for both: permission prompts show
				// whether a path is inside it.
				dir := t.TempDir()
				data = bytes.ReplaceAll(data, []byte(recordedWorkspace), []byte(dir))
				played := filepath.Join(t.TempDir(), base+".ndjson")
				if err := os.WriteFile(played, data, 0o644); err != nil {
					t.Fatal(err)
				}
				live := playLive(t, dir, played, data, p.limits)
				replayed := replayStream(t, data, p.limits)
				if diff := cmp.Diff(replayed, live); diff != "" {
					t.Errorf("live differs from replay (-replay +live):\n%s", diff)
				}
				if len(live) == 0 || live[len(live)-1].Op != "turn_end" {
					t.Errorf("the live thread did not end with a turn's end: %v", live)
				}
			})
		}
	}
}

// playLive runs the stream's people's side against a live thread whose
// agent is the stream player, and returns what the thread shows.
func playLive(t *testing.T, dir, file string, data []byte, limits channels.Limits) []channeltest.Op {
	script, err := streamplayer.Script(data)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "player.report")
	exe, _ := os.Executable()
	spec := agent.Spec{
		Name:    "player",
		Command: []string{exe, "-test.run=^$"},
		Env:     []string{"SESSION_TEST_STREAM_PLAYER=" + abs, "STREAM_PLAYER_REPORT=" + report, "GORACE=atexit_sleep_ms=0"},
	}
	policy := session.DefaultPolicy()
	e := newEnv(t, envOptions{
		rec:    channeltest.Options{Prompt: true, Edit: true, Typing: true, Limits: limits},
		policy: &policy,
		spec:   &spec,
		dir:    dir,
	})
	th := e.rec.Thread("live")
	playerFailed := func() {
		t.Helper()
		if b, err := os.ReadFile(report); err == nil {
			t.Fatalf("the stream player failed: %s", b)
		}
	}
	prompts, ended := 0, 0
	promptOp := func(n int) channeltest.Op {
		t.Helper()
		var found channeltest.Op
		err := e.rec.WaitFor(e.ctx(), th, func(ops []channeltest.Op) bool {
			seen := 0
			for _, op := range ops {
				if op.Op == "prompt" {
					if seen == n {
						found = op
						return true
					}
					seen++
				}
			}
			return false
		})
		if err != nil {
			playerFailed()
			t.Fatalf("waiting for permission prompt %d: %v", n+1, err)
		}
		return found
	}
	for _, a := range script {
		switch a.Kind {
		case "prompt":
			for ; ended < prompts; ended++ {
				e.waitEnd(th)
			}
			prompts++
			e.say(th, ann, fmt.Sprintf("prompt %d", prompts))
		case "answer":
			op := promptOp(a.Permission)
			playerFailed()
			if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, option(t, op, a.Option)); err != nil {
				t.Fatalf("click: %v", err)
			}
		case "stop":
			if a.Permission >= 0 {
				promptOp(a.Permission)
				if a.Tool != "" {
					// The prompt's tool call came after the prompt, before
					// the recorded stop: its line is shown first.
					e.waitOp(th, "the line of the prompt's tool call", func(op channeltest.Op) bool {
						return op.Kind == channels.KindTool && op.Key == a.Tool
					})
				}
			} else if a.After != "" {
				e.waitOp(th, "the text before the stop", hasText(a.After))
			}
			e.say(th, ann, "stop")
		}
	}
	for ; ended < prompts; ended++ {
		e.waitEnd(th)
	}
	e.close()
	playerFailed()
	return shown(e.rec.OpsIn(th))
}

// replayStream is `gateway replay` of data with the live thread's
// policy and a preset of the same limits.
func replayStream(t *testing.T, data []byte, limits channels.Limits) []channeltest.Op {
	policy := session.DefaultPolicy()
	var out, warn bytes.Buffer
	_, err := replay.Run(t.Context(), bytes.NewReader(data), &out, replay.Options{
		Stream: policy.Stream, Typing: policy.Typing,
		Preset:        replay.PresetFor(limits),
		FrameInterval: replay.DefaultFrameInterval,
		Person:        ann,
		Warn:          &warn,
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if warn.Len() > 0 {
		t.Errorf("replay warnings:\n%s", warn.String())
	}
	var ops []channeltest.Op
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var op channeltest.Op
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			t.Fatalf("replay output %q: %v", sc.Text(), err)
		}
		ops = append(ops, op)
	}
	return shown(ops)
}
