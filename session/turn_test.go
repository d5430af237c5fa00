package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/store"
)

func TestTurnEndToEnd(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}})
	th := e.rec.Thread("t1")
	e.say(th, ann, "echo Hello from the test.")
	end := e.waitEnd(th)
	if end.StopReason != "end_turn" || end.Err != "" {
		t.Fatalf("turn end = %+v", end)
	}
	if got := e.text(th); got != "Hello from the test." {
		t.Errorf("thread text = %q", got)
	}
	ops := e.rec.OpsIn(th)
	if ops[0].Op != "typing" {
		t.Errorf("first op = %+v, want typing", ops[0])
	}
	b, ok, err := e.st.Binding(e.ctx(), th)
	if err != nil || !ok || b.SessionID == "" {
		t.Fatalf("binding = %+v, %v, %v", b, ok, err)
	}
	turns, err := e.st.Turns(e.ctx(), b.SessionID)
	if err != nil || len(turns) != 1 || turns[0].StopReason != "end_turn" {
		t.Errorf("turns = %+v, %v", turns, err)
	}
	e.close()
	// The event log has every frame, starting with initialize.
	raw, err := os.ReadFile(filepath.Join(e.dir, "events", escape(b.SessionID)+".ndjson"))
	if err != nil {
		t.Fatalf("event log: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if !strings.Contains(lines[0], `"method":"initialize"`) {
		t.Errorf("first frame = %s", lines[0])
	}
	for _, want := range []string{`"method":"session/new"`, `"available_commands_update"`, `"method":"session/prompt"`, `"stopReason":"end_turn"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("event log lacks %s", want)
		}
	}
	// An update sent before session/new returned reached the transcript.
	es, err := e2(t, e.dir).Entries(t.Context(), b.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	var user, assistant string
	for _, en := range es {
		switch body := en.Body.(type) {
		case store.Meta:
			commands = commands[:0] // the latest meta entry counts
			for _, c := range body.Commands {
				commands = append(commands, c.Name)
			}
		case store.Message:
			if body.Role == store.RoleUser {
				user = body.Text
			} else {
				assistant = body.Text
			}
		}
	}
	if strings.Join(commands, ",") != "help,stop" {
		t.Errorf("commands in the transcript = %v, want help,stop (sent before session/new returned)", commands)
	}
	if user != "echo Hello from the test." || assistant != "Hello from the test." {
		t.Errorf("transcript user %q assistant %q", user, assistant)
	}
}

// e2 reopens the store of a closed env.
func e2(t *testing.T, dir string) *store.Store {
	st, err := store.Open(t.Context(), filepath.Join(dir, "gateway.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func escape(id string) string {
	var b strings.Builder
	for _, c := range []byte(id) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}

var _ = channels.KindText
