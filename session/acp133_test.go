package session_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/sysmsg"
)

// ACP 1.33's updates end to end: the demo agent's notice, compact and
// plans scenarios through the router, the projector and the lane to a
// recording adapter.

// TestAgentNoticesShown: the agent's notices show in the thread, each
// with its severity and as the agent's words (no Markdown, no mention),
// never in the answer; a flood outside a turn is cut to
// projector.NoticesPerMinute and said once.
func TestAgentNoticesShown(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("notices")
	e.say(th, ann, "notice")
	e.waitEnd(th)
	var notices []string
	for _, m := range e.messages(th, channels.KindNotice) {
		notices = append(notices, m.Text)
	}
	want := []string{
		"⚙️ ℹ️ Notice from the agent: `Connected to the demo MCP server`",
		"⚙️ ⚠️ Warning from the agent: `Context window 80% full` — `Older messages may be compacted soon.`",
		"⚙️ 🛑 Error from the agent: `The lint server crashed` — `Continuing without it.`",
		"⚙️ ℹ️ Notice from the agent: `**Ping** @everyone <!channel>`",
	}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant:\n%s", strings.Join(notices, "\n"), strings.Join(want, "\n"))
	}
	if got := e.text(th); strings.Contains(got, "Context window") || !strings.Contains(got, "Done: four notices") {
		t.Errorf("answer %q", got)
	}

	// Ten more once the turn is over: three are shown, then one line says
	// the next ones are hidden.
	e.say(th, ann, "notice flood")
	e.waitEnd(th)
	hidden := sysmsg.Text(sysmsg.NoticesHidden{PerMinute: projector.NoticesPerMinute})
	e.waitOp(th, "the hidden notices' line", hasText(hidden))
	e.say(th, ann, "echo over")
	e.waitEnd(th)
	n := 0
	for _, m := range e.messages(th, channels.KindNotice) {
		if m.Text == hidden {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the hidden notices were said %d times, want once", n)
	}
}

// detailAdapter is the recorder with tool details (as the web chat
// shows them), kept by key.
type detailAdapter struct {
	channels.Adapter
	channels.Editor
	mu      sync.Mutex
	details map[string]channels.ToolDetail
}

func (a *detailAdapter) ToolDetail(_ channels.ThreadRef, key string, d channels.ToolDetail) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.details[key] = d
}

func (a *detailAdapter) detail(key string) channels.ToolDetail {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.details[key]
}

// TestCompactionLine: one line per compaction, edited in place from in
// progress to its end, its summary in the tool details and never in the
// answer; a failed one shows the agent's error.
func TestCompactionLine(t *testing.T) {
	rec := channeltest.New(channeltest.Options{Edit: true, Platform: "web"})
	ad := &detailAdapter{Adapter: rec.Adapter(), Editor: rec.Adapter().(channels.Editor), details: map[string]channels.ToolDetail{}}
	e := newEnv(t, envOptions{recorder: rec, adapter: ad})
	th := rec.Thread("compact")
	e.say(th, ann, "compact")
	e.waitEnd(th)
	lines := e.messages(th, channels.KindTool)
	if len(lines) != 1 || lines[0].Text != "⚙️ 🗜️ Context compacted." {
		t.Fatalf("compaction lines %+v, want one reading compacted", lines)
	}
	edited := false
	for _, op := range rec.OpsIn(th) {
		if op.Op == "edit" && op.Msg == lines[0].ID {
			edited = true
		}
		if op.Op == "post" && op.Msg == lines[0].ID && op.Text != "⚙️ 🗜️ Compacting the context…" {
			t.Errorf("the compaction's line was posted as %q", op.Text)
		}
	}
	if !edited {
		t.Errorf("the compaction's line was not edited in place: %v", rec.OpsIn(th))
	}
	const summary = "The user asked for a demo of compaction. The agent showed notices and plans before."
	if got := ad.detail(projector.CompactionKey + "c1").Output; got != summary {
		t.Errorf("summary in the details %q, want %q", got, summary)
	}
	if got := e.text(th); strings.Contains(got, "demo of compaction") || !strings.Contains(got, "smaller context") {
		t.Errorf("answer %q", got)
	}

	e.say(th, ann, "compact fail")
	e.waitEnd(th)
	lines = e.messages(th, channels.KindTool)
	if len(lines) != 2 || lines[1].Text != "⚙️ 🗜️ Compacting the context failed: `The summary did not fit the model's context.`" {
		t.Errorf("compaction lines %+v", lines)
	}
}

// TestPlansByID: plans by id in one turn share the plan message, edited
// in place: each upserted, a removed one gone, a file plan by its path.
func TestPlansByID(t *testing.T) {
	p := session.DefaultPolicy()
	p.Stream.TagVisibility = map[string]bool{"plan": true}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}, policy: &p})
	th := e.rec.Thread("plans")
	e.say(th, ann, "plans")
	e.waitEnd(th)
	plans := e.messages(th, channels.KindPlan)
	if len(plans) != 1 {
		t.Fatalf("%d plan messages, want one edited in place: %+v", len(plans), plans)
	}
	want := "📋 Plan 1 of 2\n✅ Add the endpoint\n✅ Write its test\n\n📋 Plan 2 of 2 · `" + e.dir + "/PLAN.md`"
	if plans[0].Text != want {
		t.Errorf("plan message:\n%s\nwant:\n%s", plans[0].Text, want)
	}
	if strings.Contains(e.text(th), "Frontend") {
		t.Errorf("a plan in the answer: %q", e.text(th))
	}
}

// TestBooleanOptionEndToEnd: the demo agent's switch fast (ACP 1.33
// boolean config option) shows in /status, is set with /set fast on|off
// or its on/off buttons as session/set_config_option of type boolean, and
// kept as the thread's choice; a set the agent refuses is said with its
// words and not kept.
func TestBooleanOptionEndToEnd(t *testing.T) {
	opts := envOptions{rec: channeltest.Options{Prompt: true, Edit: true}, open: true, access: map[string]session.AccessRule{"web": {Approvers: []string{ann.ID}}}}
	wrote := watchWrites(&opts)
	e := newEnv(t, opts)
	th := channels.ThreadRef{Platform: "web", Channel: "c", Thread: "switch"}
	e.say(th, ann, "hello")
	e.waitEnd(th)
	e.command(th, ann, "/status")
	e.waitOp(th, "the status", isReply("Effort: Medium · Fast mode: off ·"))

	e.command(th, ann, "/set fast on")
	e.waitOp(th, "the confirmation", hasText("Ann set the Fast mode to on."))
	if n := e.framesWith(`"type":"boolean","value":true`); n != 1 {
		t.Fatalf("%d boolean set_config_option requests, want 1", n)
	}
	choices := func() map[string]string {
		t.Helper()
		c, err := e.st.Choices(e.ctx(), th)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Kept through the thread's saves, a moment after the confirmation.
	storedFast := func(want string) {
		t.Helper()
		e.storedOnce(wrote, func() string { return fmt.Sprintf("stored choice of fast %q, want %s", choices()["fast"], want) },
			func() bool { return choices()["fast"] == want })
	}
	storedFast("true")
	e.command(th, ann, "/status")
	e.waitOp(th, "the status after", isReply("Fast mode: on ·"))

	// The buttons: off, on (current).
	e.command(th, ann, "/set fast")
	op := e.waitOp(th, "the switch's buttons", func(op channeltest.Op) bool { return isPrompt(op) && strings.Contains(op.Text, "(now on)") })
	m, _ := e.rec.Message(op.Msg)
	if len(m.Options) != 2 || !strings.HasSuffix(m.Options[0], "/true") || !strings.HasSuffix(m.Options[1], "/false") {
		t.Fatalf("the switch's buttons: %+v", m)
	}
	if err := e.rec.Click(e.ctx(), ann, channels.Handle{Thread: th, ID: op.Msg}, m.Options[1]); err != nil {
		t.Fatal(err)
	}
	e.waitOp(th, "the click's confirmation", func(o channeltest.Op) bool {
		return o.Op == "edit" && o.Msg == op.Msg && strings.Contains(o.Text, "Ann set the Fast mode to off.")
	})
	storedFast("false")

	// Refused with high effort: said with the agent's words, not kept.
	e.command(th, ann, "/effort high")
	e.waitOp(th, "the effort", hasText("Ann set the effort to High."))
	e.command(th, ann, "/set fast on")
	e.waitOp(th, "the refusal", hasText("fast mode does not go with high effort: lower the effort first"))
	if got := choices()["fast"]; got != "false" {
		t.Errorf("a refused set was stored: fast %q", got)
	}
	e.command(th, ann, "/status")
	e.waitOp(th, "the status after the refusal", isReply("Effort: High · Fast mode: off ·"))
}
