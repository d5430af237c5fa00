package discord

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/agenttest"
	"github.com/acpgw/gateway/internal/fakemodel"
	"github.com/acpgw/gateway/session"
)

// The real agent's turn on Discord: the prompt, the file the model writes
// and what it says after.
const (
	realPrompt = "write the release note"
	realFile   = "release-note.txt"
	realBody   = "Version 2 is out.\n"
	realDone   = "The release note is written."
)

// TestRealAgentOnDiscord runs the real Gemini CLI (sandboxed, against the
// fake model API) behind the fake Discord: a mention opens a thread; the
// model writes a file, which Gemini asks about; the thread shows the
// prompt with its buttons, the approver's click on "allow once" answers it
// (the prompt folds to say who chose what, the file is on disk with the
// model's content), and the model's answer after the tool arrives in the
// thread.
func TestRealAgentOnDiscord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	a := agenttest.Gemini
	cwd := t.TempDir()
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(cwd, realFile), "content": realBody})
	fake := fakemodel.New(t, fakemodel.Script{{Prompt: realPrompt, Steps: []fakemodel.Step{
		{Tool: "write_file", Args: string(args)}, {Text: realDone, Chunks: 2}}}})
	spec := a.Spec(t, fake.URL, cwd)
	f := newFake(t)
	g := newGatewayAgent(t, f, session.AccessRule{Guilds: []string{f.guild}, Approvers: []string{ann.ID}}, Options{}, &spec)
	ctx := realCtx(t)

	id := f.say(ann, f.channel, realPrompt, true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	var prompt fakeMessage
	f.waitFor(ctx, "the permission prompt", func() bool {
		for _, m := range f.botMessagesLocked(id) {
			if m.Components != nil {
				prompt = m
				return true
			}
		}
		return false
	})
	if !strings.Contains(prompt.Content, realFile) {
		t.Errorf("prompt %q does not name %s", prompt.Content, realFile)
	}
	f.click(ann, id, prompt.ID, customIDWithSuffix(t, prompt, "/proceed_once"))
	end, ok := g.ends.Next(ctx, th)
	if !ok || end.StopReason != "end_turn" {
		t.Fatalf("turn end %+v (%v), want end_turn; messages:\n%s", end, ok, g.dump(id))
	}
	if m, _ := f.message(prompt.ID); m.Components != nil || !strings.Contains(m.Content, "chosen by Ann") {
		t.Errorf("answered prompt = %q with components %s, want the decision without buttons", m.Content, m.Components)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, realFile)); err != nil || string(b) != realBody {
		t.Errorf("%s = %q, %v; want the model's %q", realFile, b, err, realBody)
	}
	if got := answerText(g.since(id, 0)); !strings.Contains(got, realDone) {
		t.Errorf("answer %q, want the model's %q after the tool:\n%s", got, realDone, g.dump(id))
	}
	if !t.Failed() {
		agenttest.Proved(t, a.Pin(), agenttest.Text, agenttest.Tools, agenttest.Permissions)
	}
}

// realCtx bounds each wait on the real agent, which starts slowly on a
// loaded machine.
func realCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
