package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/google/go-cmp/cmp"
)

// demoSession is a session as the gateway shows it in the tests.
func demoSession() channels.SessionInfo {
	return channels.SessionInfo{
		Agent: "demo", Model: "Fast", Mode: "Ask", Effort: "",
		ContextUsed: 42_000, ContextSize: 200_000, Cost: 0.21, Currency: "USD",
		Settings: []channels.Setting{
			{ID: "model", Category: "model", Name: "Model", Current: "fast", Values: []channels.Option{{ID: "fast", Label: "Fast"}, {ID: "deep", Label: "Deep"}}},
			{ID: "mode", Category: "mode", Name: "Mode", Current: "ask", Values: []channels.Option{{ID: "ask", Label: "Ask"}, {ID: "code", Label: "Code"}}},
			{ID: "effort", Category: "thought_level", Name: "Effort", Current: "low", Values: []channels.Option{{ID: "low"}, {ID: "high"}}},
			{ID: "verbosity", Name: "Verbosity", Current: "terse", Values: []channels.Option{{ID: "terse"}, {ID: "chatty"}}},
		},
		Commands: append([]channels.CommandInfo{{Name: channels.CommandStop, Description: "Stop the running turn"}},
			channels.CommandInfo{Name: "model", Description: "Pick the model", Arg: &channels.CommandArg{Name: "model", Suggest: true}},
			channels.CommandInfo{Name: "compact", Description: "Compact the conversation", Agent: true}),
	}
}

// TestShowSession: the thread's session reaches its live stream (at
// once and in the first state of a new stream) and its messages' JSON,
// with the context as a percentage and each setting's command.
func TestShowSession(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)

	s := c.openStream(t, "/api/threads/"+id+"/events")
	s.next(t, "threads")
	s.next(t, "typing")
	a.ShowSession(ref(id), demoSession())
	a.ShowSession(channels.ThreadRef{Platform: "discord", Channel: "local", Thread: id}, channels.SessionInfo{Agent: "other"})
	a.ShowSession(ref("nosuch"), demoSession())
	var live sessionView
	if err := json.Unmarshal([]byte(s.next(t, "session").data), &live); err != nil {
		t.Fatal(err)
	}
	if live.Agent != "demo" || live.ContextPercent != 21 || live.Cost != 0.21 || live.Currency != "USD" {
		t.Errorf("session event = %+v, want agent demo, 21%% context, $0.21", live)
	}
	var cmds []string
	for _, st := range live.Settings {
		cmds = append(cmds, st.ID+":"+st.Command+":"+st.Current)
	}
	if want := []string{"model:model:fast", "mode:mode:ask", "effort:effort:low", "verbosity:set:terse"}; !cmp.Equal(cmds, want) {
		t.Errorf("settings (-want +got):\n%s", cmp.Diff(want, cmds))
	}
	if n := len(live.Commands); n != 3 || !live.Commands[n-1].Agent || live.Commands[n-2].Arg != "model" {
		t.Errorf("commands = %+v, want the gateway's, model (with its argument) and the agent's compact", live.Commands)
	}

	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(b.Session, &live) {
		t.Errorf("messages' session (-live +got):\n%s", cmp.Diff(&live, b.Session))
	}
	s2 := c.openStream(t, "/api/threads/"+id+"/events")
	s2.next(t, "threads")
	s2.next(t, "typing")
	if got := s2.next(t, "session").data; !strings.Contains(got, `"agent":"demo"`) {
		t.Errorf("a new stream's session = %s, want the demo agent's", got)
	}

	// Unknown context: -1, no cost without a currency.
	a.ShowSession(ref(id), channels.SessionInfo{Agent: "demo", Cost: 3})
	var bare sessionView
	json.Unmarshal([]byte(s.next(t, "session").data), &bare)
	if bare.ContextPercent != -1 || bare.Cost != 0 || bare.Settings == nil || bare.Commands == nil {
		t.Errorf("bare session = %+v, want context -1, no cost, empty lists", bare)
	}
}

// TestCommandEndpoint: the header's menus send a command by name, which
// arrives as Inbound.Command whether or not ParseCommand knows it.
func TestCommandEndpoint(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	for _, tc := range []struct {
		body map[string]string
		want channels.Command
		text string
	}{
		{map[string]string{"author": "ann", "name": "model", "args": " deep "}, channels.Command{Name: "model", Args: "deep"}, "/model deep"},
		{map[string]string{"name": "/Set", "args": "verbosity chatty"}, channels.Command{Name: "set", Args: "verbosity chatty"}, "/set verbosity chatty"},
		{map[string]string{"name": "stop"}, channels.Command{Name: "stop"}, "/stop"},
	} {
		r := c.do(ctx, t, "POST", "/api/threads/"+id+"/commands", tc.body)
		if err := r.want(http.StatusAccepted); err != nil {
			t.Fatal(err)
		}
		ev := in.next(t)
		if ev.Intent() != channels.IntentCommand || ev.Command == nil || *ev.Command != tc.want || ev.Text != tc.text || ev.Thread != ref(id) || ev.ID == "" || ev.Reply == nil {
			t.Errorf("%v arrived as %v %+v text %q; want command %+v, text %q", tc.body, ev.Intent(), ev.Command, ev.Text, tc.want, tc.text)
		}
	}
	if b, _ := c.messages(ctx, id); len(b.Messages) != 0 {
		t.Errorf("messages after commands = %+v, want none", b.Messages)
	}
	for _, tc := range []struct {
		path string
		body map[string]string
		code int
	}{
		{"/api/threads/" + id + "/commands", map[string]string{"name": ""}, http.StatusBadRequest},
		{"/api/threads/" + id + "/commands", map[string]string{"name": "mo del"}, http.StatusBadRequest},
		{"/api/threads/" + id + "/commands", map[string]string{"name": "model", "args": "a\nb"}, http.StatusBadRequest},
		{"/api/threads/nosuch/commands", map[string]string{"name": "model"}, http.StatusNotFound},
	} {
		r := c.do(ctx, t, "POST", tc.path, tc.body)
		if err := r.want(tc.code); err != nil {
			t.Errorf("%v: %v", tc.body, err)
		}
	}
	in.empty(t)
}

func ptr(f float64) *float64 { return &f }

// demoForm has a field of each kind.
func demoForm() channels.Form {
	return channels.Form{Title: "Deploy", Text: "How shall I **deploy**?", Fields: []channels.Field{
		{ID: "name", Label: "Name", Kind: channels.FieldText, Required: true, Max: ptr(20)},
		{ID: "count", Label: "Replicas", Kind: channels.FieldNumber, Min: ptr(1), Max: ptr(5), Default: "2"},
		{ID: "env", Label: "Environment", Kind: channels.FieldChoice, Required: true, Options: []channels.Option{{ID: "stg", Label: "Staging"}, {ID: "prod", Label: "Production"}}},
		{ID: "regions", Label: "Regions", Kind: channels.FieldMulti, Options: []channels.Option{{ID: "eu", Label: "EU"}, {ID: "us", Label: "US"}, {ID: "ap", Label: "Asia"}}},
		{ID: "dry", Label: "Dry run", Kind: channels.FieldBool},
	}}
}

// TestFormAPI: a form shows in the thread, a bad answer is refused
// saying why, a good one arrives as Inbound.Form with its values, and
// the gateway's edit folds it (no form left to answer).
func TestFormAPI(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	h, err := a.Form(ctx, ref(id), demoForm())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.messages(ctx, id)
	if len(b.Messages) != 1 || b.Messages[0].Kind != "form" || b.Messages[0].Form == nil || len(b.Messages[0].Form.Fields) != 5 || b.Messages[0].Form.Fields[2].Kind != "choice" {
		t.Fatalf("messages after Form = %+v, want one form message with 5 fields", b.Messages)
	}
	path := "/api/threads/" + id + "/forms/" + string(h.ID) + "/answer"
	for _, tc := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"action": "accept", "values": map[string][]string{"env": {"stg"}}}, `"Name" is required`},
		{map[string]any{"action": "accept", "values": map[string][]string{"name": {"x"}, "env": {"dev"}}}, `no option "dev"`},
		{map[string]any{"action": "accept", "values": map[string][]string{"name": {"x"}, "env": {"stg"}, "count": {"9"}}}, `between 1 and 5`},
		{map[string]any{"action": "accept", "values": map[string][]string{"name": {"x"}, "env": {"stg"}, "count": {"two"}}}, `must be a number`},
		{map[string]any{"action": "accept", "values": map[string][]string{"name": {"x"}, "env": {"stg"}, "dry": {"yes"}}}, `true or false`},
		{map[string]any{"action": "accept", "values": map[string][]string{"name": {"x"}, "env": {"stg", "prod"}}}, `takes one value`},
		{map[string]any{"action": "accept", "values": map[string][]string{"name": {"x"}, "env": {"stg"}, "color": {"red"}}}, `no field "color"`},
		{map[string]any{"action": "maybe"}, `accept, decline or cancel`},
		{map[string]any{}, `"action" is required`},
	} {
		r := c.do(ctx, t, "POST", path, tc.body)
		if err := r.want(http.StatusBadRequest); err != nil || !strings.Contains(r.errorText(), tc.want) {
			t.Errorf("%v: %v %q, want 400 saying %q", tc.body, err, r.errorText(), tc.want)
		}
	}
	in.empty(t)

	r := c.do(ctx, t, "POST", path, map[string]any{"author": "ann", "action": "accept", "values": map[string][]string{
		"name": {"web"}, "count": {"3"}, "env": {"prod"}, "regions": {"eu", "ap"}, "dry": {"false"},
	}})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	ev := in.next(t)
	want := &channels.FormAnswer{Form: h, Action: channels.FormAccept, Values: map[string][]string{
		"name": {"web"}, "count": {"3"}, "env": {"prod"}, "regions": {"eu", "ap"}, "dry": {"false"},
	}}
	if ev.Intent() != channels.IntentForm || !cmp.Equal(ev.Form, want) || ev.Author.Name != "ann" {
		t.Errorf("answer arrived as %v %+v from %+v; want a form answer from ann (-want +got):\n%s", ev.Intent(), ev.Form, ev.Author, cmp.Diff(want, ev.Form))
	}

	if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindNotice, Text: "✅ Answered by ann"}); err != nil {
		t.Fatal(err)
	}
	r = c.do(ctx, t, "POST", path, map[string]any{"action": "decline"})
	if err := r.want(http.StatusConflict); err != nil {
		t.Errorf("answer after the fold: %v", err)
	}
	in.empty(t)

	// A URL form: Done and Decline, no values.
	u, err := a.Form(ctx, ref(id), channels.Form{Title: "Sign in", URL: "https://example.com/login"})
	if err != nil {
		t.Fatal(err)
	}
	r = c.do(ctx, t, "POST", "/api/threads/"+id+"/forms/"+string(u.ID)+"/answer", map[string]any{"action": "decline"})
	if err := r.want(http.StatusAccepted); err != nil {
		t.Fatal(err)
	}
	if ev := in.next(t); ev.Form == nil || ev.Form.Action != channels.FormDecline || ev.Form.Form != u {
		t.Errorf("URL form's decline arrived as %+v", ev.Form)
	}
}

func TestFormErrors(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	ctx := t.Context()
	th, err := a.st.createThread("")
	if err != nil {
		t.Fatal(err)
	}
	id := th.ID
	for _, f := range []channels.Form{
		{},
		{Title: "No fields"},
		{Title: "Bad url", URL: "javascript:alert(1)"},
		{Title: "Url and fields", URL: "https://example.com", Fields: []channels.Field{{ID: "a", Kind: channels.FieldText}}},
		{Title: "No id", Fields: []channels.Field{{Kind: channels.FieldText}}},
		{Title: "Dup", Fields: []channels.Field{{ID: "a", Kind: channels.FieldText}, {ID: "a", Kind: channels.FieldBool}}},
		{Title: "Kind", Fields: []channels.Field{{ID: "a"}}},
		{Title: "No options", Fields: []channels.Field{{ID: "a", Kind: channels.FieldChoice}}},
	} {
		if _, err := a.Form(ctx, ref(id), f); err == nil || !channels.IsPermanent(err) {
			t.Errorf("Form(%+v) = %v, want a permanent error", f, err)
		}
	}
	if _, err := a.Form(ctx, ref("nosuch"), demoForm()); err == nil {
		t.Error("Form in an unknown thread succeeded")
	}
}

// TestReact: the gateway's reactions show on a person's message, live,
// and go away again.
func TestReact(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	r := c.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]string{"text": "hi"})
	var posted idBody
	r.decode(t, &posted)
	h := channels.Handle{Thread: ref(id), ID: channels.MessageID(posted.ID)}
	s := c.openStream(t, "/api/threads/"+id+"/events")
	s.next(t, "threads")
	s.next(t, "message")
	s.next(t, "typing")

	if err := a.React(ctx, h, "👀"); err != nil {
		t.Fatal(err)
	}
	a.React(ctx, h, "👀") // twice: no change
	if err := a.React(ctx, h, "✅"); err != nil {
		t.Fatal(err)
	}
	if err := a.Unreact(ctx, h, "👀"); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for range 3 {
		var m message
		json.Unmarshal([]byte(s.next(t, "message").data), &m)
		got = append(got, m.Reactions)
	}
	if want := [][]string{{"👀"}, {"👀", "✅"}, {"✅"}}; !cmp.Equal(got, want) {
		t.Errorf("reactions as events (-want +got):\n%s", cmp.Diff(want, got))
	}
	b, _ := c.messages(ctx, id)
	if !cmp.Equal(b.Messages[0].Reactions, []string{"✅"}) || b.Messages[0].Text != "hi" {
		t.Errorf("message = %+v, want hi with ✅", b.Messages[0])
	}
	if err := a.React(ctx, channels.Handle{Thread: ref(id), ID: "gone"}, "✅"); !errors.Is(err, channels.ErrMessageGone) {
		t.Errorf("React on a missing message = %v, want ErrMessageGone", err)
	}
	if err := a.React(ctx, h, ""); err == nil {
		t.Error("React with no emoji succeeded")
	}
}

func FuzzParseCommandRequest(f *testing.F) {
	for _, s := range append(seeds, `{"name":"model","args":"deep"}`, `{"name":"/Set","args":" a b "}`, `{"name":"x y"}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseCommandRequest(body)
		if err != nil {
			return
		}
		checkAuthor(t, req.authorFields)
		if !commandName.MatchString(req.Name) || req.Args != strings.TrimSpace(req.Args) || strings.ContainsFunc(req.Args, unicode.IsControl) || !utf8.ValidString(req.Args) {
			t.Errorf("accepted command %q %q", req.Name, req.Args)
		}
	})
}

// FuzzFormAnswer decodes an answer and checks it against the demo form:
// what is accepted fits the form.
func FuzzFormAnswer(f *testing.F) {
	for _, s := range append(seeds,
		`{"action":"accept","values":{"name":["web"],"env":["prod"],"count":["3"],"regions":["eu","ap"],"dry":["true"]}}`,
		`{"action":"decline"}`, `{"action":"accept","values":{"count":["1e400"]}}`) {
		f.Add([]byte(s))
	}
	fv, err := checkForm(demoForm())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseFormRequest(body)
		if err != nil {
			return
		}
		checkAuthor(t, req.authorFields)
		vals, err := checkAnswer(fv, req.Action, req.Values)
		if err != nil {
			return
		}
		if req.Action != channels.FormAccept {
			if vals != nil {
				t.Errorf("%s with values %v", req.Action, vals)
			}
			return
		}
		if len(vals["name"]) != 1 || len(vals["env"]) != 1 || utf8.RuneCountInString(vals["name"][0]) > 20 {
			t.Errorf("accepted %v without the required fields, or a name too long", vals)
		}
		if c := vals["count"]; len(c) == 1 {
			if n, err := strconv.ParseFloat(c[0], 64); err != nil || n < 1 || n > 5 {
				t.Errorf("accepted count %q", c[0])
			}
		}
		for id, vs := range vals {
			for _, v := range vs {
				if v == "" || !utf8.ValidString(v) {
					t.Errorf("accepted %s = %q", id, v)
				}
			}
		}
	})
}

// TestSessionViewShare: the header's context share follows the one rule
// of the footer and /status (sysmsg.Share): 2,140 of 258,400 is "<1%",
// not 1 % beside the footer's 0 %.
func TestSessionViewShare(t *testing.T) {
	v := sessionViewOf(channels.SessionInfo{ContextUsed: 2140, ContextSize: 258400})
	if v.ContextShare != "<1%" {
		t.Errorf("share %q, want <1%%", v.ContextShare)
	}
	if v := sessionViewOf(channels.SessionInfo{ContextUsed: 625, ContextSize: 1000}); v.ContextShare != "63%" || v.ContextPercent != 63 {
		t.Errorf("share %q (%d), want 63%%", v.ContextShare, v.ContextPercent)
	}
	if v := sessionViewOf(channels.SessionInfo{}); v.ContextShare != "" || v.ContextPercent != -1 {
		t.Errorf("an unknown share: %q (%d)", v.ContextShare, v.ContextPercent)
	}
}
