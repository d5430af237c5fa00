package channels_test

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// plain is an adapter with no capability.
type plain struct{}

func (plain) Run(context.Context, func(context.Context, channels.Inbound)) error { return nil }
func (plain) Post(context.Context, channels.ThreadRef, channels.Message) (channels.Handle, error) {
	return channels.Handle{}, nil
}
func (plain) Limits() channels.Limits { return channels.Limits{} }

// editTyper has two capabilities by its type.
type editTyper struct{ plain }

func (editTyper) Edit(context.Context, channels.Handle, channels.Message) error { return nil }
func (editTyper) Typing(context.Context, channels.ThreadRef) error              { return nil }

// carder is a Carder whose cards are on or off.
type carder struct {
	plain
	on bool
}

func (c carder) Cards() bool { return c.on }
func (carder) Card(context.Context, channels.ThreadRef, channels.Handle, []channels.Message) (channels.Handle, error) {
	return channels.Handle{}, nil
}

// every implements every capability interface and reports what caps
// holds now.
type every struct {
	carder
	mu   sync.Mutex
	caps channels.Caps
}

func (e *every) Caps() channels.Caps {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.caps
}

func (e *every) set(c channels.Caps) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.caps = c
}

func (*every) Edit(context.Context, channels.Handle, channels.Message) error { return nil }
func (*every) Typing(context.Context, channels.ThreadRef) error              { return nil }
func (*every) StopTyping(context.Context, channels.ThreadRef) error          { return nil }
func (*every) Prompt(context.Context, channels.ThreadRef, channels.Choice) (channels.Handle, error) {
	return channels.Handle{}, nil
}
func (*every) Upload(context.Context, channels.ThreadRef, channels.Upload) (channels.Handle, error) {
	return channels.Handle{}, nil
}
func (*every) SetTitle(context.Context, channels.ThreadRef, string) error { return nil }
func (*every) React(context.Context, channels.Handle, string) error       { return nil }
func (*every) Unreact(context.Context, channels.Handle, string) error     { return nil }
func (*every) Form(context.Context, channels.ThreadRef, channels.Form) (channels.Handle, error) {
	return channels.Handle{}, nil
}
func (*every) SetCommands(context.Context, []channels.CommandInfo) error { return nil }
func (*every) MessagesAfter(context.Context, channels.ThreadRef, channels.MessageID, int) (channels.Page, error) {
	return channels.Page{}, nil
}
func (*every) TurnEnded(context.Context, channels.ThreadRef)              {}
func (*every) ToolDetail(channels.ThreadRef, string, channels.ToolDetail) {}
func (*every) ShowAgent(channels.ThreadRef, string)                       {}
func (*every) ShowSession(channels.ThreadRef, channels.SessionInfo)       {}
func (*every) Check() error                                               { return nil }
func (*every) Sessions() <-chan struct{}                                  { return nil }

// all returns Caps with every capability.
func all() channels.Caps {
	var c channels.Caps
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		v.Field(i).SetBool(true)
	}
	return c
}

// one returns Caps with field i of the struct alone.
func one(i int) channels.Caps {
	var c channels.Caps
	reflect.ValueOf(&c).Elem().Field(i).SetBool(true)
	return c
}

// The names are what cluster edges announce: changing one would make a
// worker misread what an edge of the release before announced.
func TestCapsNames(t *testing.T) {
	want := []string{"edit", "typing", "stop_typing", "prompt", "upload", "title", "card", "cards", "react",
		"form", "commands", "history", "turn_end", "tool_detail", "show_agent", "show_session", "check", "new_sessions"}
	if got := all().Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	if got := (channels.Caps{}).Names(); got == nil || len(got) != 0 {
		t.Errorf("Names() of no capability = %#v, want an empty list", got)
	}
	// Each field has one name of its own, and the names read back.
	for i := range reflect.TypeFor[channels.Caps]().NumField() {
		c := one(i)
		name := reflect.TypeFor[channels.Caps]().Field(i).Name
		if got := c.Names(); len(got) != 1 {
			t.Errorf("%s alone is named %q, want one name", name, got)
		}
		if got := channels.CapsNamed(c.Names()); got != c {
			t.Errorf("CapsNamed(%q) = %+v, want %s alone", c.Names(), got, name)
		}
	}
	if got := channels.CapsNamed([]string{"edit", "hologram", "typing"}); got != (channels.Caps{Edit: true, Typing: true}) {
		t.Errorf("CapsNamed with a name this build does not know = %+v, want edit and typing", got)
	}
}

// An adapter that does not report its capabilities has what its type
// implements.
func TestCapsOfByType(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    channels.Adapter
		want channels.Caps
	}{
		{"plain", plain{}, channels.Caps{}},
		{"edit and typing", editTyper{}, channels.Caps{Edit: true, Typing: true}},
		{"cards off", carder{}, channels.Caps{Card: true}},
		{"cards on", carder{on: true}, channels.Caps{Card: true, Cards: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := channels.CapsOf(tc.a); got != tc.want {
				t.Errorf("CapsOf = %+v, want %+v", got, tc.want)
			}
		})
	}
	e := &every{carder: carder{on: true}}
	if got := channels.CapsOf(struct{ channels.Adapter }{e}); got != (channels.Caps{}) {
		t.Errorf("a wrapper that hides the methods has %+v, want none", got)
	}
}

// A reporting adapter has what it reports and implements, as it reports
// it at the time.
func TestCapsOfReported(t *testing.T) {
	e := &every{carder: carder{on: true}}
	if got := channels.CapsOf(e); got != (channels.Caps{}) {
		t.Errorf("reporting none: %+v", got)
	}
	e.set(all())
	if got := channels.CapsOf(e); got != all() {
		t.Errorf("reporting all: %+v, want %+v", got, all())
	}
	e.set(channels.Caps{})
	if got := channels.Implemented(e); got != all() {
		t.Errorf("Implemented, reporting none: %+v, want %+v", got, all())
	}
	e.set(channels.Caps{Edit: true, Prompt: true})
	if got, want := channels.CapsOf(e), (channels.Caps{Edit: true, Prompt: true}); got != want {
		t.Errorf("reporting edit and prompt: %+v, want %+v", got, want)
	}
	// Reported but not implemented, or cards reported while Cards says
	// no: not there.
	e.carder.on = false
	e.set(channels.Caps{Card: true, Cards: true})
	if got, want := channels.CapsOf(e), (channels.Caps{Card: true}); got != want {
		t.Errorf("cards reported, Cards() false: %+v, want %+v", got, want)
	}
	type reportsUpload struct {
		editTyper
		channels.CapsReporter
	}
	r := reportsUpload{CapsReporter: e}
	e.set(channels.Caps{Upload: true, Edit: true})
	if got, want := channels.CapsOf(r), (channels.Caps{Edit: true}); got != want {
		t.Errorf("upload reported by a type without Upload: %+v, want %+v", got, want)
	}
}

// As finds a capability as CapsOf has it, each time anew.
func TestAs(t *testing.T) {
	e := &every{}
	if _, ok := channels.As[channels.Editor](e); ok {
		t.Error("As[Editor] of an adapter that reports no edits succeeded")
	}
	e.set(channels.Caps{Edit: true})
	if ed, ok := channels.As[channels.Editor](e); !ok || ed == nil {
		t.Error("As[Editor] failed once edits are reported")
	}
	if _, ok := channels.As[channels.Typer](e); ok {
		t.Error("As[Typer] succeeded with only edits reported")
	}
	if _, ok := channels.As[channels.Typer](editTyper{}); !ok {
		t.Error("As[Typer] of a Typer that reports nothing failed")
	}
	if _, ok := channels.As[channels.Prompter](editTyper{}); ok {
		t.Error("As[Prompter] of an adapter without Prompt succeeded")
	}
	// Every capability interface is gated by its own field.
	checks := map[string]func(channels.Adapter) bool{
		"Edit":        is[channels.Editor],
		"Typing":      is[channels.Typer],
		"StopTyping":  is[channels.TypingStopper],
		"Prompt":      is[channels.Prompter],
		"Upload":      is[channels.Uploader],
		"Title":       is[channels.Titler],
		"Card":        is[channels.Carder],
		"React":       is[channels.Reactor],
		"Form":        is[channels.Former],
		"Commands":    is[channels.Commander],
		"History":     is[channels.History],
		"TurnEnd":     is[channels.TurnEnder],
		"ToolDetail":  is[channels.ToolDetailer],
		"ShowAgent":   is[channels.AgentShower],
		"ShowSession": is[channels.SessionShower],
		"Check":       is[channels.Checker],
		"NewSessions": is[channels.NewSessions],
	}
	ct := reflect.TypeFor[channels.Caps]()
	for i := range ct.NumField() {
		e.set(one(i))
		for name, as := range checks {
			if got, want := as(e), name == ct.Field(i).Name; got != want {
				t.Errorf("with %s alone reported, As for %s = %v, want %v", ct.Field(i).Name, name, got, want)
			}
		}
	}
	// Not a capability: a plain assertion.
	e.set(channels.Caps{})
	if _, ok := channels.As[channels.CapsReporter](e); !ok {
		t.Error("As[CapsReporter] failed")
	}
	if _, ok := channels.As[channels.CapsReporter](plain{}); ok {
		t.Error("As[CapsReporter] of a non-reporter succeeded")
	}
}

func is[T any](a channels.Adapter) bool {
	_, ok := channels.As[T](a)
	return ok
}
