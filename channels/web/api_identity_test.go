package web

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// Who someone is comes from their token: named tokens are people, the
// single token is its owner, and what a request's body says about its
// author never makes it someone else.
func TestIdentityFromToken(t *testing.T) {
	const annTok, bobTok, ownerTok = "ann-token", "bob-token", "owner-token"
	a := New(Options{Listen: "127.0.0.1:0", Token: ownerTok, Users: map[string]string{"ann": annTok, "bob": bobTok}})
	a.replyWait = time.Millisecond
	in := serve(t, a, nil)
	c := newClient(t, a)
	c.token = ""
	ctx := t.Context()
	c.token = annTok
	id := c.newThread(ctx, t)
	c.token = ""
	prompt, err := a.Prompt(ctx, ref(id), channels.Choice{Text: "Allow?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := "/api/threads/" + id + "/messages"
	answer := "/api/threads/" + id + "/prompts/" + string(prompt.ID) + "/answer"

	t.Run("me", func(t *testing.T) {
		// The gateway's commands (channels.Commands), for the palette.
		var cmds []commandView
		for _, c := range channels.Commands() {
			cmds = append(cmds, commandView{Name: c.Name, Description: c.Description})
			if c.Arg != nil {
				cmds[len(cmds)-1].Arg = c.Arg.Name
			}
		}
		if !slices.Contains(cmds, commandView{Name: "stop", Description: "Stop the running turn"}) {
			t.Errorf("commands = %+v, want stop among them", cmds)
		}
		for tok, want := range map[string]meBody{
			annTok:   {ID: "web:ann", Name: "ann", Fixed: true, Agents: []string{}, Commands: cmds},
			bobTok:   {ID: "web:bob", Name: "bob", Fixed: true, Agents: []string{}, Commands: cmds},
			ownerTok: {ID: "web:owner", Name: "owner", Agents: []string{}, Commands: cmds},
		} {
			r, err := c.try(ctx, "GET", "/api/me", nil, bearer(tok))
			if err != nil {
				t.Fatal(err)
			}
			var got meBody
			r.decode(t, &got)
			if r.status != 200 || !reflect.DeepEqual(got, want) {
				t.Errorf("GET /api/me with %s = %d %+v, want %+v", tok, r.status, got, want)
			}
		}
		if r, _ := c.try(ctx, "GET", "/api/me", nil, bearer("ann-tokeN")); r.status != 401 {
			t.Errorf("GET /api/me with a wrong token = %d, want 401", r.status)
		}
	})

	accepted := []struct {
		name  string
		token string
		path  string
		body  map[string]string
		want  channels.Author
	}{
		{"named token", bobTok, msgs, map[string]string{"text": "hi"}, channels.Author{ID: "web:bob", Name: "bob"}},
		{"named token with its own name and id", bobTok, msgs, map[string]string{"author": "bob", "authorId": "web:bob", "text": "hi"}, channels.Author{ID: "web:bob", Name: "bob"}},
		{"owner token with a label", ownerTok, msgs, map[string]string{"author": "Boss", "text": "hi"}, channels.Author{ID: "web:owner", Name: "Boss"}},
		{"token in the query", "", msgs + "?token=" + annTok, map[string]string{"text": "hi"}, channels.Author{ID: "web:ann", Name: "ann"}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			var h http.Header
			if tc.token != "" {
				h = bearer(tc.token)
			}
			r, err := c.try(ctx, "POST", tc.path, tc.body, h)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.want(http.StatusAccepted); err != nil {
				t.Fatal(err)
			}
			if ev := in.next(t); !cmp.Equal(ev.Author, tc.want) {
				t.Errorf("Inbound.Author = %+v, want %+v", ev.Author, tc.want)
			}
		})
	}

	// bob cannot act as ann, nor anyone as the approver web:boss: not
	// for a message, a stop, or an answer to a prompt.
	forged := []struct {
		name, token, path string
		body              map[string]string
		errText           string
	}{
		{"message as another id", bobTok, msgs, map[string]string{"authorId": "web:ann", "text": "hi"},
			`your token is web:bob's; "authorId" "web:ann" names someone else (who you are comes from the token, not the request)`},
		{"message under another name", bobTok, msgs, map[string]string{"author": "ann", "text": "hi"},
			`your token is bob's; "author" "ann" names someone else (who you are comes from the token, not the request)`},
		{"stop as another id", bobTok, "/api/threads/" + id + "/stop", map[string]string{"authorId": "web:ann"},
			`your token is web:bob's; "authorId" "web:ann" names someone else (who you are comes from the token, not the request)`},
		{"answer as the approver", bobTok, answer, map[string]string{"author": "boss", "authorId": "web:boss", "optionId": "allow"},
			`your token is web:bob's; "authorId" "web:boss" names someone else (who you are comes from the token, not the request)`},
		{"owner answers as ann", ownerTok, answer, map[string]string{"authorId": "web:ann", "optionId": "allow"},
			`your token is web:owner's; "authorId" "web:ann" names someone else (who you are comes from the token, not the request)`},
	}
	for _, tc := range forged {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.try(ctx, "POST", tc.path, tc.body, bearer(tc.token))
			if err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusForbidden || r.errorText() != tc.errText {
				t.Errorf("POST %s = %d %s, want 403 %q", tc.path, r.status, r.body, tc.errText)
			}
			in.empty(t)
		})
	}
}

// TestFileNamesShowFormatCharacters: a file name with a right-to-left
// override or a zero-width space, posted through the HTTP API, is shown
// in the thread and given to the gateway with them written visibly; so is
// the name of a file the gateway puts into the thread.
func TestFileNamesShowFormatCharacters(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]any{
		"author": "ann",
		"files":  []map[string]string{{"name": "invoice\u202efdp.exe", "type": "text/plain", "data": base64.StdEncoding.EncodeToString([]byte("x"))}},
	})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	ev := in.next(t)
	if len(ev.Files) != 1 || ev.Files[0].Name != "invoice[U+202E]fdp.exe" {
		t.Errorf("the gateway got %+v, want the name with [U+202E]", ev.Files)
	}
	if _, err := a.Upload(ctx, ref(id), channels.Upload{Name: "a\u200bb.txt", Data: []byte("y")}); err != nil {
		t.Fatal(err)
	}
	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, m := range b.Messages {
		shown = append(shown, m.Text)
		for _, f := range m.Files {
			shown = append(shown, f.Name)
		}
	}
	all := strings.Join(shown, "\n")
	for _, want := range []string{"📎 invoice[U+202E]fdp.exe", "a[U+200B]b.txt"} {
		if !strings.Contains(all, want) {
			t.Errorf("the thread shows %q, want %q", all, want)
		}
	}
	if strings.ContainsAny(all, "\u202e\u200b") {
		t.Errorf("the thread shows a format character: %q", all)
	}
}
