package agent_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/projector"
)

// demoSpec runs the test binary as the demo agent, keeping its sessions in
// stateDir.
func demoSpec(stateDir string) agent.Spec {
	exe, _ := os.Executable()
	return agent.Spec{Name: "demo", Command: []string{exe, "--state-dir", stateDir}, Env: []string{"AGENT_TEST_DEMO=1", "GORACE=atexit_sleep_ms=0"}}
}

func option(opts []agent.ConfigOption, id string) agent.ConfigOption {
	for _, o := range opts {
		if o.ID == id {
			return o
		}
	}
	return agent.ConfigOption{}
}

func (r *recorder) tagged(tag projector.Tag) []projector.Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []projector.Update
	for _, u := range r.updates {
		if u.Tag == tag {
			out = append(out, u)
		}
	}
	return out
}

// TestDemoConfigOptions: the demo agent's model, mode and effort arrive as
// config options with their categories; setting one answers with the new
// values, the config_option_update reaches the Handler before the call
// returns, a bad value is the agent's error, the legacy set_mode is
// confirmed by current_mode_update, and a new process loads the choice.
func TestDemoConfigOptions(t *testing.T) {
	state := t.TempDir()
	cwd := t.TempDir()
	p := start(t, demoSpec(state), agent.Options{})
	var rec recorder
	s, err := p.NewSession(t.Context(), cwd, &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	var cats []string
	for _, o := range s.Config {
		cats = append(cats, o.ID+"="+o.Category+":"+o.Value)
	}
	if want := []string{"model=model:demo-fast", "mode=mode:default", "effort=thought_level:medium", "fast=:false"}; !slices.Equal(cats, want) {
		t.Errorf("config options = %v, want %v", cats, want)
	}
	if s.Models == nil || s.Models.Current != "demo-fast" || len(s.Models.Available) != 2 {
		t.Errorf("Models = %+v, want demo-fast of two, from the model option", s.Models)
	}

	opts, err := s.SetConfigOption(t.Context(), "model", "demo-smart")
	if err != nil {
		t.Fatalf("SetConfigOption: %v", err)
	}
	if v := option(opts, "model").Value; v != "demo-smart" {
		t.Errorf("model after set = %q, want demo-smart", v)
	}
	ups := rec.tagged(projector.TagConfigOption)
	if len(ups) != 1 || option(toAgent(ups[0].Config), "model").Value != "demo-smart" {
		t.Errorf("config_option_update = %+v, want one with model demo-smart", ups)
	}

	if _, err := s.SetConfigOption(t.Context(), "effort", "extreme"); err == nil || !strings.Contains(err.Error(), `-32602`) || !strings.Contains(err.Error(), `extreme`) {
		t.Errorf("SetConfigOption(effort, extreme) = %v, want the agent's invalid params", err)
	}
	if _, err := s.SetConfigOption(t.Context(), "effort", "high"); err != nil {
		t.Fatalf("SetConfigOption(effort): %v", err)
	}

	if err := s.SetMode(t.Context(), "plan"); err != nil {
		t.Fatalf("SetMode: %v", err)
	}
	modes := rec.tagged(projector.TagCurrentMode)
	if len(modes) == 0 || modes[len(modes)-1].ModeID != "plan" {
		t.Errorf("current_mode_update after SetMode = %+v, want plan last", modes)
	}

	// Another process loads the session with the choices made.
	p2 := start(t, demoSpec(state), agent.Options{})
	l, err := p2.LoadSession(t.Context(), s.ID, cwd, &recorder{})
	if err != nil {
		t.Fatalf("LoadSession: %v", err)
	}
	var got []string
	for _, o := range l.Config {
		got = append(got, o.ID+"="+o.Value)
	}
	if want := []string{"model=demo-smart", "mode=plan", "effort=high", "fast=false"}; !slices.Equal(got, want) {
		t.Errorf("loaded config = %v, want %v", got, want)
	}
	if l.Modes == nil || l.Modes.Current != "plan" {
		t.Errorf("loaded Modes = %+v, want plan", l.Modes)
	}
}

// toAgent lets option read a config_option_update's options.
func toAgent(in []projector.ConfigOption) []agent.ConfigOption {
	out := make([]agent.ConfigOption, len(in))
	for i, c := range in {
		out[i] = agent.ConfigOption{ID: c.ID, Name: c.Name, Value: c.Value}
	}
	return out
}

// TestDemoListAndClose: session/list lists the demo agent's sessions (all,
// or one directory's); Close sends session/close, after which the agent
// no longer knows the session and the Handler gets nothing more.
func TestDemoListAndClose(t *testing.T) {
	var fr frames
	p := start(t, demoSpec(t.TempDir()), agent.Options{Frames: fr.sink})
	if !p.CanList() || !p.CanClose() || !p.CanResume() {
		t.Errorf("CanList %v CanClose %v CanResume %v, want all true", p.CanList(), p.CanClose(), p.CanResume())
	}
	cwd1, cwd2 := t.TempDir(), t.TempDir()
	s1, err := p.NewSession(t.Context(), cwd1, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Prompt(t.Context(), "title First one"); err != nil {
		t.Fatal(err)
	}
	s2, err := p.NewSession(t.Context(), cwd2, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.ListSessions(t.Context(), "")
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	ids := map[string]agent.SessionInfo{}
	for _, i := range all {
		ids[i.ID] = i
	}
	if len(all) != 2 || ids[s1.ID].Cwd != cwd1 || ids[s1.ID].Title != "First one" || ids[s2.ID].Cwd != cwd2 || ids[s2.ID].UpdatedAt == "" {
		t.Errorf("ListSessions = %+v, want both sessions with cwd, s1's title and times", all)
	}
	one, err := p.ListSessions(t.Context(), cwd2)
	if err != nil || len(one) != 1 || one[0].ID != s2.ID {
		t.Errorf("ListSessions(cwd2) = %+v, %v; want only s2", one, err)
	}

	sent, err := s1.Close(t.Context())
	if err != nil || !sent {
		t.Fatalf("Close = %v, %v; want sent", sent, err)
	}
	if _, err := s1.Prompt(t.Context(), "echo hi"); err == nil || !strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("Prompt after Close = %v, want the agent's resource not found", err)
	}
	if _, err := s1.Close(t.Context()); err == nil {
		t.Error("a second Close succeeded; want the agent's resource not found")
	}

	// Resumed, the session answers again, with no history replayed and
	// its config options reported.
	var rec recorder
	r, err := p.ResumeSession(t.Context(), s1.ID, cwd1, &rec)
	if err != nil {
		t.Fatalf("ResumeSession: %v", err)
	}
	if len(rec.updates) != 0 || option(r.Config, "model").Value != "demo-fast" || r.Modes == nil {
		t.Errorf("resume: updates %+v, config %+v, modes %+v; want no history, the options and the modes", rec.updates, r.Config, r.Modes)
	}
	if _, err := r.Prompt(t.Context(), "echo again"); err != nil || strings.Join(rec.texts(), "") != "again" {
		t.Errorf("Prompt after resume = %v, texts %q", err, rec.texts())
	}
	if _, err := p.ResumeSession(t.Context(), "demo-nope", cwd1, &recorder{}); err == nil {
		t.Error("resuming an unknown session succeeded")
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	n := 0
	for i, l := range fr.lines {
		if fr.dirs[i] == agent.ToAgent && strings.Contains(l, `"method":"session/close"`) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("session/close frames = %d, want 2", n)
	}
}

// TestRawNoListCloseResume: an agent that advertises none of list, close
// and resume is not sent them: Close only forgets the session locally.
func TestRawNoListCloseResume(t *testing.T) {
	var fr frames
	p := start(t, rawSpec(), agent.Options{Frames: fr.sink})
	s, err := p.NewSession(t.Context(), t.TempDir(), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListSessions(t.Context(), ""); !errors.Is(err, agent.ErrUnsupported) {
		t.Errorf("ListSessions = %v, want ErrUnsupported", err)
	}
	if _, err := p.ResumeSession(t.Context(), "raw-1", t.TempDir(), &recorder{}); !errors.Is(err, agent.ErrUnsupported) {
		t.Errorf("ResumeSession = %v, want ErrUnsupported", err)
	}
	if sent, err := s.Close(t.Context()); sent || err != nil {
		t.Errorf("Close = %v, %v; want not sent, no error", sent, err)
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for i, l := range fr.lines {
		if fr.dirs[i] == agent.ToAgent && (strings.Contains(l, "session/close") || strings.Contains(l, "session/list") || strings.Contains(l, "session/resume")) {
			t.Errorf("sent %s", l)
		}
	}
}

// asker is a Handler that answers questions with a fixed Answer and keeps
// them.
type asker struct {
	recorder
	answer agent.Answer
	qmu    sync.Mutex
	asked  []agent.Question
}

func (a *asker) Question(ctx context.Context, q agent.Question) agent.Answer {
	a.qmu.Lock()
	a.asked = append(a.asked, q)
	a.qmu.Unlock()
	return a.answer
}

// TestDemoElicitation: the gateway advertises elicitation in both modes;
// the demo agent's questions reach the Questioner as the gateway's types
// (choices, multi-select, text and number bounds, url), and the answer —
// accepted with content, declined, cancelled — reaches the agent.
func TestDemoElicitation(t *testing.T) {
	var fr frames
	p := start(t, demoSpec(t.TempDir()), agent.Options{Frames: fr.sink})
	fr.mu.Lock()
	if !strings.Contains(fr.lines[0], `"elicitation":{"form":{},"url":{}}`) {
		t.Errorf("initialize = %s, want elicitation form and url advertised", fr.lines[0])
	}
	fr.mu.Unlock()
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name, prompt string
		answer       agent.Answer
		want         agent.Question // SessionID filled in
		reply        string
	}{
		{"choice accepted", "ask-choice", agent.Answer{Action: agent.Accept, Content: map[string]any{"color": "green"}},
			agent.Question{Mode: "form", Message: "Which color should the button be?", Fields: []agent.Field{{Name: "color", Title: "Color", Kind: agent.FieldChoice, Required: true,
				Choices: []agent.Choice{{Value: "red", Title: "Red"}, {Value: "green", Title: "Green"}, {Value: "blue", Title: "Blue"}}}}},
			"You chose green."},
		{"choice declined", "ask-choice", agent.Answer{Action: agent.Decline}, agent.Question{}, "You declined to answer."},
		{"choice cancelled", "ask-choice", agent.Answer{Action: agent.Cancel}, agent.Question{}, "The question was cancelled."},
		{"content with decline is dropped", "ask-choice", agent.Answer{Action: agent.Decline, Content: map[string]any{"color": "red"}}, agent.Question{}, "You declined to answer."},
		{"multi", "ask-multi", agent.Answer{Action: agent.Accept, Content: map[string]any{"platforms": []string{"windows", "linux"}}},
			agent.Question{Mode: "form", Message: "Which platforms should I test?", Fields: []agent.Field{{Name: "platforms", Title: "Platforms", Kind: agent.FieldMulti, Min: f(1),
				Choices: []agent.Choice{{Value: "linux", Title: "linux"}, {Value: "macos", Title: "macos"}, {Value: "windows", Title: "windows"}}}}},
			"You picked: linux, windows."},
		{"text and number", "ask-text", agent.Answer{Action: agent.Accept, Content: map[string]any{"name": "Aurora", "retries": 3}},
			agent.Question{Mode: "form", Message: "Tell me about the release.", Fields: []agent.Field{
				{Name: "name", Title: "Release name", Kind: agent.FieldText, Required: true, Min: f(1), Max: f(40)},
				{Name: "retries", Title: "Retries", Kind: agent.FieldInteger, Min: f(0), Max: f(5), Default: "2"}}},
			"Release Aurora with 3 retries."},
		{"url", "ask-url", agent.Answer{Action: agent.Accept},
			agent.Question{Mode: "url", Message: "Please sign in to the demo service.", URL: "https://example.com/demo-login"},
			"Thanks, you are signed in."},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &asker{answer: c.answer}
			s, err := p.NewSession(t.Context(), t.TempDir(), h)
			if err != nil {
				t.Fatal(err)
			}
			stop, err := s.Prompt(t.Context(), c.prompt)
			if err != nil || stop != "end_turn" {
				t.Fatalf("Prompt = %q, %v", stop, err)
			}
			if got := strings.Join(h.texts(), ""); got != c.reply {
				t.Errorf("reply = %q, want %q", got, c.reply)
			}
			if len(h.asked) != 1 {
				t.Fatalf("asked %d questions, want 1", len(h.asked))
			}
			q := h.asked[0]
			if q.SessionID != s.ID {
				t.Errorf("question's session = %q, want %q", q.SessionID, s.ID)
			}
			if c.want.Mode == "" {
				return
			}
			c.want.SessionID = s.ID
			if c.want.URL != "" {
				c.want.ElicitationID = "login-" + s.ID
				if q.Completed == nil {
					t.Error("a url question without Completed")
				}
				c.want.Completed = q.Completed
			}
			if diff := cmpDiff(c.want, q); diff != "" {
				t.Errorf("question (-want +got):\n%s", diff)
			}
		})
	}

	// A Handler that cannot ask gets its questions cancelled.
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "ask-url"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.texts(), ""); got != "The question was cancelled." {
		t.Errorf("reply without a Questioner = %q, want the cancelled line", got)
	}
}

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

// TestRawBadQuestions: questions that cannot be shown get the JSON-RPC
// invalid params error saying why (no session, a field type a form cannot
// take, an unknown mode); a question for an unknown session is cancelled.
// The Questioner is never called for them, and the turn goes on.
func TestRawBadQuestions(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	h := &asker{answer: agent.Answer{Action: agent.Accept}}
	s, err := p.NewSession(t.Context(), t.TempDir(), h)
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(t.Context(), "elicit-bad"); err != nil || stop != "end_turn" {
		t.Fatalf("Prompt = %q, %v", stop, err)
	}
	got := map[string]string{}
	for _, line := range h.texts()[1:] { // after the early chunk of session/new
		for _, id := range []string{"q1", "q2", "q3", "q4"} {
			if strings.Contains(line, `"id":"`+id+`"`) {
				got[id] = line
			}
		}
	}
	for id, want := range map[string][]string{
		"q1": {`"code":-32602`, "no sessionId"},
		"q2": {`"code":-32602`, `field \"x\": type \"object\"`},
		"q3": {`"code":-32602`, `mode \"carrier-pigeon\"`},
		"q4": {`"result":{"action":"cancel"}`},
	} {
		for _, w := range want {
			if !strings.Contains(got[id], w) {
				t.Errorf("answer to %s = %q, want it to contain %s", id, got[id], w)
			}
		}
	}
	if len(h.asked) != 0 {
		t.Errorf("the Questioner was asked %+v; want none", h.asked)
	}
}

// TestSteeringUpdatesReachHandler: usage (with cost), mode and config
// option updates reach the Handler as the gateway's types.
func TestSteeringUpdatesReachHandler(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "steer-updates"); err != nil {
		t.Fatal(err)
	}
	u := rec.tagged(projector.TagUsage)
	if len(u) != 1 || u[0].Usage != (projector.UsageUpdate{Used: 31000, Size: 200000, UsedKnown: true, SizeKnown: true, Cost: 0.21, Currency: "USD", CostKnown: true}) {
		t.Errorf("usage updates = %+v", u)
	}
	if m := rec.tagged(projector.TagCurrentMode); len(m) != 1 || m[0].ModeID != "plan" {
		t.Errorf("mode updates = %+v", m)
	}
	c := rec.tagged(projector.TagConfigOption)
	if len(c) != 1 || len(c[0].Config) != 1 || c[0].Config[0] != (projector.ConfigOption{ID: "model", Name: "Model", Value: "big"}) {
		t.Errorf("config option updates = %+v", c)
	}
}

// waiter answers a url question Accept once the agent reports it done.
type waiter struct{ recorder }

func (w *waiter) Question(ctx context.Context, q agent.Question) agent.Answer {
	select {
	case <-q.Completed:
		return agent.Answer{Action: agent.Accept}
	case <-ctx.Done():
		return agent.Answer{Action: agent.Cancel}
	}
}

// TestRawURLQuestionCompleted: elicitation/complete from the agent closes
// the waiting url question's Completed channel.
func TestRawURLQuestionCompleted(t *testing.T) {
	p := start(t, rawSpec(), agent.Options{})
	var w waiter
	s, err := p.NewSession(t.Context(), t.TempDir(), &w)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "elicit-url-done"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.texts(), ""); !strings.Contains(got, `"id":"u1","result":{"action":"accept"}}`) {
		t.Errorf("answer = %q, want accept", got)
	}
}
