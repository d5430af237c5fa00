package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/internal/testlog"
)

// errCode returns the JSON-RPC code of err, or 0.
func errCode(err error) int {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func TestInitialize(t *testing.T) {
	tests := []struct {
		name        string
		authEnv     string
		wantMethods string // the authMethods array as written
	}{
		{"no auth", "", `[]`},
		{"env token", "DEMO_TOKEN", `[{"description":"set $DEMO_TOKEN","id":"env-token","name":"Environment token"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, Options{AuthEnv: tc.authEnv})
				defer h.stop()
				resp := h.initialize()
				if got, want := int(resp.ProtocolVersion), 1; got != want {
					t.Errorf("protocolVersion = %d, want %d", got, want)
				}
				if !resp.AgentCapabilities.LoadSession {
					t.Errorf("agentCapabilities.loadSession = false, want true")
				}
				pc := resp.AgentCapabilities.PromptCapabilities
				if !pc.Image || pc.Audio || pc.EmbeddedContext {
					t.Errorf("promptCapabilities = %+v, want images only", pc)
				}
				fs := h.tap.frames(t)
				var result struct{ AuthMethods json.RawMessage }
				if err := json.Unmarshal(fs[len(fs)-1].Result, &result); err != nil {
					t.Fatal(err)
				}
				if got := string(result.AuthMethods); got != tc.wantMethods {
					t.Errorf("authMethods = %s, want %s", got, tc.wantMethods)
				}
			})
		})
	}
}

func TestAuthentication(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		env := map[string]string{}
		getenv := func(k string) string { mu.Lock(); defer mu.Unlock(); return env[k] }
		h := start(t, Options{AuthEnv: "DEMO_TOKEN", Getenv: getenv})
		defer h.stop()
		h.initialize()
		ctx := t.Context()

		_, err := h.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "/w", McpServers: []acp.McpServer{}})
		if got, want := errCode(err), -32000; got != want {
			t.Errorf("session/new before authenticate: code %d (%v), want %d", got, err, want)
		}
		_, err = h.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: "demo-000000000000", Cwd: "/w", McpServers: []acp.McpServer{}})
		if got, want := errCode(err), -32000; got != want {
			t.Errorf("session/load before authenticate: code %d (%v), want %d", got, err, want)
		}
		_, err = h.conn.Authenticate(ctx, acp.AuthenticateRequest{MethodId: "password"})
		if got, want := errCode(err), -32602; got != want {
			t.Errorf("authenticate with an unknown method: code %d (%v), want %d", got, err, want)
		}
		_, err = h.conn.Authenticate(ctx, acp.AuthenticateRequest{MethodId: AuthMethodID})
		if got, want := errCode(err), -32000; got != want {
			t.Errorf("authenticate with $DEMO_TOKEN empty: code %d (%v), want %d", got, err, want)
		}

		mu.Lock()
		env["DEMO_TOKEN"] = "secret"
		mu.Unlock()
		if _, err := h.conn.Authenticate(ctx, acp.AuthenticateRequest{MethodId: AuthMethodID}); err != nil {
			t.Fatalf("authenticate with $DEMO_TOKEN set: %v", err)
		}
		h.newSession()
	})
}

func TestSessionSetupRejects(t *testing.T) {
	tests := []struct {
		name   string
		params string
	}{
		{"null mcpServers", `{"cwd":"/w","mcpServers":null}`},
		{"missing mcpServers", `{"cwd":"/w"}`},
		{"relative cwd", `{"cwd":"w","mcpServers":[]}`},
		{"empty cwd", `{"cwd":"","mcpServers":[]}`},
	}
	for _, tc := range tests {
		for _, method := range []string{acp.AgentMethodSessionNew, acp.AgentMethodSessionLoad} {
			t.Run(tc.name+" "+method, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := start(t, Options{})
					defer h.stop()
					h.initialize()
					params := json.RawMessage(strings.Replace(tc.params, "{", `{"sessionId":"demo-000000000000",`, 1))
					err := h.rawCall(method, params)
					if got, want := errCode(err), -32602; got != want {
						t.Errorf("%s %s: code %d (%v), want %d (invalid params)", method, tc.params, got, err, want)
					}
				})
			})
		}
	}
}

func TestNewSessionUpdatesBeforeResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.initialize()
		id := h.newSession()
		if !strings.HasPrefix(string(id), "demo-") || !validSessionID(string(id)) {
			t.Errorf("session id %q, want demo- and 12 hex digits", id)
		}
		if got := len(h.client.received()); got != 2 {
			t.Errorf("client saw %d updates when session/new returned, want 2", got)
		}

		var got []string
		for _, f := range h.tap.frames(t) {
			switch {
			case f.Method == acp.ClientMethodSessionUpdate:
				var p struct {
					SessionID string
					Update    wireUpdate
				}
				json.Unmarshal(f.Params, &p)
				got = append(got, p.Update.SessionUpdate+" "+p.SessionID)
			case bytes.Contains(f.Result, []byte(`"sessionId":"`+string(id)+`"`)):
				got = append(got, "response "+string(id))
			}
		}
		want := []string{
			"available_commands_update " + string(id),
			"current_mode_update " + string(id),
			"response " + string(id),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("wire order (-want +got):\n%s", diff)
		}
		if other := h.newSession(); other == id {
			t.Errorf("two sessions got the same id %q", id)
		}
	})
}

func TestLoadReplaysHistoryInNewProcess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		h := start(t, Options{StateDir: dir})
		h.initialize()
		id := h.newSession()
		for _, p := range []string{"echo first reply", "refuse", "echo second\nreply"} {
			if _, err := h.prompt(id, p); err != nil {
				t.Fatalf("prompt %q: %v", p, err)
			}
		}
		if _, err := h.conn.SetSessionMode(t.Context(), acp.SetSessionModeRequest{SessionId: id, ModeId: modePlan}); err != nil {
			t.Fatalf("set mode: %v", err)
		}
		if err := h.stop(); err != nil {
			t.Fatalf("Run = %v, want nil on stdin EOF", err)
		}

		h2 := start(t, Options{StateDir: dir})
		defer h2.stop()
		h2.initialize()
		resp, err := h2.conn.LoadSession(t.Context(), acp.LoadSessionRequest{SessionId: id, Cwd: "/work/demo", McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatalf("session/load: %v", err)
		}
		if resp.Modes == nil || resp.Modes.CurrentModeId != modePlan {
			t.Errorf("load modes = %+v, want current mode plan", resp.Modes)
		}
		var got []string
		for _, n := range h2.client.received() {
			switch u := n.Update; {
			case u.UserMessageChunk != nil:
				got = append(got, "user: "+u.UserMessageChunk.Content.Text.Text)
			case u.AgentMessageChunk != nil:
				got = append(got, "agent: "+u.AgentMessageChunk.Content.Text.Text)
			default:
				got = append(got, "other")
			}
		}
		want := []string{"user: echo first reply", "agent: first reply", "user: refuse", "user: echo second\nreply", "agent: second\nreply"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("replayed history (-want +got):\n%s", diff)
		}
		if r, err := h2.prompt(id, "echo again"); err != nil || r.StopReason != acp.StopReasonEndTurn {
			t.Errorf("prompt after load = %v, %v; want end_turn", r.StopReason, err)
		}
	})
}

func TestUnknownSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "demo-00000000000f.json"), []byte(`{"version":1,"id":"demo-00000000000f"`), 0o600)
		h := start(t, Options{StateDir: dir})
		defer h.stop()
		h.initialize()
		ctx := t.Context()
		for _, tc := range []struct {
			id   acp.SessionId
			want int
		}{
			{"demo-0123456789ab", -32002},
			{"../../etc/passwd", -32002},
			{"demo-00000000000f", -32603}, // a corrupt file
		} {
			_, err := h.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: tc.id, Cwd: "/w", McpServers: []acp.McpServer{}})
			if got := errCode(err); got != tc.want {
				t.Errorf("session/load %q: code %d (%v), want %d", tc.id, got, err, tc.want)
			}
		}
		_, err := h.prompt("demo-0123456789ab", "hello")
		if got, want := errCode(err), -32002; got != want {
			t.Errorf("prompt in an unknown session: code %d (%v), want %d", got, err, want)
		}
		_, err = h.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: h.newSession(), ModeId: "yolo"})
		if got, want := errCode(err), -32602; got != want {
			t.Errorf("set unknown mode: code %d (%v), want %d", got, err, want)
		}
	})
}

func TestCancelSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.initialize()
		id := h.newSession()
		type result struct {
			resp acp.PromptResponse
			err  error
			at   time.Time
		}
		done := make(chan result, 1)
		go func() {
			r, err := h.prompt(id, "slow")
			done <- result{r, err, time.Now()}
		}()
		time.Sleep(time.Second) // fake time: about 20 words
		cancelAt := time.Now()
		if err := h.conn.Cancel(t.Context(), acp.CancelNotification{SessionId: id}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || r.resp.StopReason != acp.StopReasonCancelled {
			t.Fatalf("slow after cancel = %q, %v; want cancelled", r.resp.StopReason, r.err)
		}
		if took := r.at.Sub(cancelAt); took > 10*time.Millisecond {
			t.Errorf("cancel took %v, want at once", took)
		}
		if n := len(h.client.received()) - 2; n < 15 || n > 25 {
			t.Errorf("got %d words before the cancel, want about 20", n)
		}
	})
}

func TestIgnoreCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.initialize()
		id := h.newSession()
		start := time.Now()
		done := make(chan acp.PromptResponse, 1)
		go func() {
			r, err := h.prompt(id, "ignore-cancel 2")
			if err != nil {
				t.Errorf("prompt: %v", err)
			}
			done <- r
		}()
		time.Sleep(500 * time.Millisecond)
		h.conn.Cancel(t.Context(), acp.CancelNotification{SessionId: id})
		r := <-done
		if r.StopReason != acp.StopReasonEndTurn {
			t.Errorf("stopReason = %q, want end_turn", r.StopReason)
		}
		if took := time.Since(start); took < 1800*time.Millisecond {
			t.Errorf("turn took %v, want the full 2s", took)
		}
		if got, want := text(steps(t, h.tap.frames(t))), "tick 1 tick 2 tick 3 tick 4 tick 5 tick 6 tick 7 tick 8 tick 9 tick 10 "; got != want {
			t.Errorf("text = %q, want %q", got, want)
		}
	})
}

func TestPromptsRunOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, Options{})
		defer h.stop()
		h.initialize()
		id := h.newSession()
		first := make(chan acp.PromptResponse, 1)
		go func() {
			r, err := h.prompt(id, "slow 100")
			if err != nil {
				t.Errorf("superseded prompt: %v", err)
			}
			first <- r
		}()
		time.Sleep(200 * time.Millisecond)
		second, err := h.prompt(id, "echo next")
		if err != nil || second.StopReason != acp.StopReasonEndTurn {
			t.Errorf("second prompt = %q, %v; want end_turn", second.StopReason, err)
		}
		if r := <-first; r.StopReason != acp.StopReasonCancelled {
			t.Errorf("superseded prompt = %q, want cancelled", r.StopReason)
		}
		ss := steps(t, h.tap.frames(t))
		if last := ss[len(ss)-1]; last.text != "next" {
			t.Errorf("last chunk %q, want the second prompt's %q after all of the first's", last.text, "next")
		}
	})
}

func TestRunEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		runErr := make(chan error, 1)
		go func() { runErr <- Run(ctx, inR, outW, Options{StateDir: t.TempDir()}) }()
		client := &fakeClient{}
		conn := acp.NewClientSideConnection(client, inW, outR)
		conn.SetLogger(testlog.FailOnError(t))
		conn.Initialize(t.Context(), acp.InitializeRequest{ProtocolVersion: 1})
		s, err := conn.NewSession(t.Context(), acp.NewSessionRequest{Cwd: "/w", McpServers: []acp.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan acp.PromptResponse, 1)
		go func() {
			r, _ := conn.Prompt(t.Context(), acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("slow")}})
			done <- r
		}()
		time.Sleep(300 * time.Millisecond)
		cancel()
		if r := <-done; r.StopReason != acp.StopReasonCancelled {
			t.Errorf("running prompt ended %q, want cancelled", r.StopReason)
		}
		if err := <-runErr; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
		outW.Close()
		<-conn.Done()
	})
}
