package session_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// An agent that behaves as Gemini CLI (the demo agent's --like-gemini):
// its models only in session/new's unstable "models", set with
// session/set_model; its legacy modes confirmed by no current_mode_update;
// yolo refused. /model lists and sets the models by name, /status and the
// header show the names of the model and mode in use, a mode the agent
// took is recorded, one it refused is not kept, and the next session gets
// the choices it took, not the refused one.
func TestGeminiModelsAndModesEndToEnd(t *testing.T) {
	state := t.TempDir()
	spec := demoSpec(state)
	spec.Command = append(spec.Command, "--like-gemini")
	rec := channeltest.New(channeltest.Options{Platform: "web"})
	sh := shower{Adapter: rec.Adapter(), shown: make(chan channels.SessionInfo, 100)}
	e := newEnv(t, envOptions{spec: &spec, recorder: rec, adapter: sh})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "gemini"}
	shown := func(ok func(channels.SessionInfo) bool) {
		t.Helper()
		for {
			select {
			case info := <-sh.shown:
				if ok(info) {
					return
				}
			case <-e.ctx().Done():
				t.Fatal("the session was not shown as wanted")
			}
		}
	}
	agentRecords := func() (models, modes []string) {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(state, "demo-*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var r struct{ Mode, Model string }
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			models, modes = append(models, r.Model), append(modes, r.Mode)
		}
		return models, modes
	}

	e.say(th, ann, "hello")
	e.waitEnd(th)
	shown(func(i channels.SessionInfo) bool { return i.Model == "Auto" && i.Mode == "Default" })
	e.command(th, ann, "/model")
	e.waitOp(th, "the models", isReply("The model: Auto (current), Gemini Pro, Gemini Flash."))
	e.command(th, ann, "/model gemini-pro")
	e.waitOp(th, "the model confirmed", hasText("Ann set the model to Gemini Pro."))
	shown(func(i channels.SessionInfo) bool { return i.Model == "Gemini Pro" })
	if models, _ := agentRecords(); len(models) != 1 || models[0] != "gemini-pro" {
		t.Fatalf("the agent's models = %q, want gemini-pro", models)
	}

	e.command(th, ann, "/mode plan")
	e.waitOp(th, "the mode confirmed", hasText("Ann set the mode to Plan."))
	e.command(th, ann, "/mode yolo")
	e.waitOp(th, "the mode refused", isReply("Could not set the mode: the agent refused (error -32603). The agent says: `Internal error: Cannot enable privileged approval modes in an untrusted folder.`"))
	e.command(th, ann, "/status")
	e.waitOp(th, "the status", isReply("Model: Gemini Pro · Mode: Plan"))
	shown(func(i channels.SessionInfo) bool { return i.Mode == "Plan" })

	e.command(th, ann, "/new")
	e.waitOp(th, "the new session", hasText("Ann ended this thread's session"))
	e.say(th, ann, "hello again")
	e.waitEnd(th)
	if n := e.framesWith(`"modeId":"yolo"`); n != 1 {
		t.Errorf("yolo was asked for %d times, want once (refused, so not kept)", n)
	}
	if n := e.framesWith(`"method":"session/set_model"`); n != 2 {
		t.Errorf("%d session/set_model requests, want 2 (the new session's too)", n)
	}
	models, modes := agentRecords()
	if len(models) != 2 || models[0] != "gemini-pro" || models[1] != "gemini-pro" || modes[0] != "plan" || modes[1] != "plan" {
		t.Errorf("the agent's sessions: models %q, modes %q; want gemini-pro and plan in both", models, modes)
	}
	e.command(th, bob, "/status")
	err := e.rec.WaitFor(e.ctx(), th, func(ops []channeltest.Op) bool {
		n := 0
		for _, op := range ops {
			if isReply("Model: Gemini Pro · Mode: Plan")(op) {
				n++
			}
		}
		return n == 2
	})
	if err != nil {
		t.Errorf("the new session's status: %v", err)
	}
}

// The models of a session the gateway loads again (session/load after a
// restart) come from its result's unstable "models" too: the thread
// shows the model the session has, and it is not set again.
func TestGeminiModelsAfterLoad(t *testing.T) {
	dir := t.TempDir()
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	spec.Command = append(spec.Command, "--like-gemini")
	e := newEnv(t, envOptions{dir: dir, spec: &spec})
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "gemini-load"}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.command(th, ann, "/model gemini-flash")
	e.waitOp(th, "the model confirmed", hasText("Ann set the model to Gemini Flash."))
	e.close()

	e = newEnv(t, envOptions{dir: dir, spec: &spec})
	e.say(th, ann, "echo again")
	e.waitEnd(th)
	if n := e.framesWith(`"method":"session/load"`); n != 1 || e.framesWith(`"method":"session/new"`) != 1 {
		t.Fatalf("%d session/load requests, want 1, and no second session/new", n)
	}
	e.command(th, ann, "/status")
	e.waitOp(th, "the status", isReply("Model: Gemini Flash"))
	if n := e.framesWith(`"method":"session/set_model"`); n != 1 {
		t.Errorf("%d session/set_model requests, want 1 (the loaded session has the model already)", n)
	}
}

// TestRefusedChoiceAtStartIsForgotten: a mode stored for the thread
// (chosen while another agent, or a trusted folder, allowed it) that the
// agent refuses when a new session is given it is said in the thread
// with the agent's words and forgotten: the next session is not given it
// again.
func TestRefusedChoiceAtStartIsForgotten(t *testing.T) {
	spec := demoSpec(t.TempDir())
	spec.Command = append(spec.Command, "--like-gemini")
	opts := envOptions{spec: &spec, rec: channeltest.Options{Edit: true}}
	wrote := watchWrites(&opts)
	e := newEnv(t, opts)
	th := e.rec.Thread("refused")
	const storedMode = "\x00mode" // session's key of a legacy mode
	if err := e.st.SetChoice(e.ctx(), th, storedMode, "yolo"); err != nil {
		t.Fatal(err)
	}
	e.say(th, ann, "echo first")
	e.waitEnd(th)
	e.waitOp(th, "the refusal", hasText("Could not set the mode: the agent refused (error -32603). The agent says: `Internal error: Cannot enable privileged approval modes in an untrusted folder.`"))
	var cs map[string]string
	e.storedOnce(wrote, func() string { return fmt.Sprintf("choices after the refusal: %q; want the mode forgotten", cs) }, func() bool {
		var err error
		if cs, err = e.st.Choices(e.ctx(), th); err != nil {
			t.Fatal(err)
		}
		return cs[storedMode] == ""
	})
	e.command(th, ann, "/new")
	e.waitOp(th, "the new session", hasText("Ann ended this thread's session"))
	e.say(th, ann, "echo second")
	e.waitEnd(th)
	if n := e.framesWith(`"modeId":"yolo"`); n != 1 {
		t.Errorf("yolo was asked for %d times, want once (refused, so forgotten)", n)
	}
}
