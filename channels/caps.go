package channels

import "reflect"

// Caps says which of the optional capabilities an adapter has: one field
// per capability interface, and Cards for what Carder.Cards says. It is
// the data form of those interfaces, for what is only known at run time
// (a token's scopes, what a cluster edge announced): an adapter whose
// capabilities change implements every method and reports which of them
// hold (CapsReporter), as it reports its Limits.
type Caps struct {
	Edit       bool // Editor
	Typing     bool // Typer
	StopTyping bool // TypingStopper
	Prompt     bool // Prompter
	Upload     bool // Uploader
	Title      bool // Titler
	Card       bool // Carder
	// Cards says that tool calls are shown as cards (Carder.Cards).
	Cards       bool
	React       bool // Reactor
	Form        bool // Former
	Commands    bool // Commander
	History     bool // History
	TurnEnd     bool // TurnEnder
	ToolDetail  bool // ToolDetailer
	ShowAgent   bool // AgentShower
	ShowSession bool // SessionShower
	Check       bool // Checker
	NewSessions bool // NewSessions
}

// CapsReporter is implemented by adapters that know their capabilities
// only at run time. Caps reports those that hold now; it does no I/O and
// may change from one call to the next. The methods of a capability Caps
// does not report may be there (and fail, or do nothing): the gateway
// asks As or CapsOf, never the type alone.
type CapsReporter interface {
	Caps() Caps
}

// capability is one row of the table of capabilities.
type capability struct {
	// name is the capability's one spelling: in logs and in what a
	// cluster edge announces (package cluster/wire).
	name  string
	field func(*Caps) *bool
	// iface is the capability's interface, nil for Cards (a setting of
	// a Carder, not an interface of its own).
	iface reflect.Type
	// has reports whether a's type offers the capability.
	has func(a Adapter) bool
}

// iface returns the row of capability name whose interface is T.
func iface[T any](name string, field func(*Caps) *bool) capability {
	return capability{name: name, field: field, iface: reflect.TypeFor[T](), has: func(a Adapter) bool {
		_, ok := a.(T)
		return ok
	}}
}

// capabilities is the one table of the capabilities, in the order Names
// lists them. The names are those cluster edges have announced since
// the first cluster release (package cluster/wire): stored and announced
// data keeps its meaning, so a name is never changed, only added.
var capabilities = [...]capability{
	iface[Editor]("edit", func(c *Caps) *bool { return &c.Edit }),
	iface[Typer]("typing", func(c *Caps) *bool { return &c.Typing }),
	iface[TypingStopper]("stop_typing", func(c *Caps) *bool { return &c.StopTyping }),
	iface[Prompter]("prompt", func(c *Caps) *bool { return &c.Prompt }),
	iface[Uploader]("upload", func(c *Caps) *bool { return &c.Upload }),
	iface[Titler]("title", func(c *Caps) *bool { return &c.Title }),
	iface[Carder]("card", func(c *Caps) *bool { return &c.Card }),
	{name: "cards", field: func(c *Caps) *bool { return &c.Cards }, has: func(a Adapter) bool {
		c, ok := a.(Carder)
		return ok && c.Cards()
	}},
	iface[Reactor]("react", func(c *Caps) *bool { return &c.React }),
	iface[Former]("form", func(c *Caps) *bool { return &c.Form }),
	iface[Commander]("commands", func(c *Caps) *bool { return &c.Commands }),
	iface[History]("history", func(c *Caps) *bool { return &c.History }),
	iface[TurnEnder]("turn_end", func(c *Caps) *bool { return &c.TurnEnd }),
	iface[ToolDetailer]("tool_detail", func(c *Caps) *bool { return &c.ToolDetail }),
	iface[AgentShower]("show_agent", func(c *Caps) *bool { return &c.ShowAgent }),
	iface[SessionShower]("show_session", func(c *Caps) *bool { return &c.ShowSession }),
	iface[Checker]("check", func(c *Caps) *bool { return &c.Check }),
	iface[NewSessions]("new_sessions", func(c *Caps) *bool { return &c.NewSessions }),
}

// byInterface finds a capability's row by its interface (As).
var byInterface = func() map[reflect.Type]*capability {
	m := map[reflect.Type]*capability{}
	for i := range capabilities {
		if c := &capabilities[i]; c.iface != nil {
			m[c.iface] = c
		}
	}
	return m
}()

// Names returns the names of the capabilities c has, in the table's
// order: "edit", "typing", "stop_typing", "prompt", "upload", "title",
// "card", "cards", "react", "form", "commands", "history", "turn_end",
// "tool_detail", "show_agent", "show_session", "check", "new_sessions".
func (c Caps) Names() []string {
	out := []string{}
	for _, r := range capabilities {
		if *r.field(&c) {
			out = append(out, r.name)
		}
	}
	return out
}

// CapsNamed returns the capabilities names lists (as Names spells them).
// A name it does not know is left out: one that a newer edge announces
// means nothing to this build.
func CapsNamed(names []string) Caps {
	var c Caps
	for _, n := range names {
		for _, r := range capabilities {
			if r.name == n {
				*r.field(&c) = true
			}
		}
	}
	return c
}

// and returns the capabilities both c and d have.
func (c Caps) and(d Caps) Caps {
	var out Caps
	for _, r := range capabilities {
		*r.field(&out) = *r.field(&c) && *r.field(&d)
	}
	return out
}

// Implemented returns the capabilities a's type implements (Cards: where
// it is a Carder whose Cards reports true), whatever it reports: what an
// adapter's own Caps starts from, to take away those a run-time fact
// removes.
func Implemented(a Adapter) Caps {
	var c Caps
	for _, r := range capabilities {
		*r.field(&c) = r.has(a)
	}
	return c
}

// CapsOf returns a's capabilities: those its type implements
// (Implemented) and, where it is a CapsReporter, that it reports now.
func CapsOf(a Adapter) Caps {
	c := Implemented(a)
	if rep, ok := a.(CapsReporter); ok {
		c = c.and(rep.Caps())
	}
	return c
}

// As returns a as the capability interface T (Editor, Typer, …) where a
// has that capability now: its type implements T and, where it is a
// CapsReporter, it reports the capability. The gateway finds a capability
// with As at the point of use, and calls it through the interface. For a
// T that is no capability interface of this package, As is a plain type
// assertion.
func As[T any](a Adapter) (T, bool) {
	var zero T
	t, ok := a.(T)
	if !ok {
		return zero, false
	}
	rep, reports := a.(CapsReporter)
	if !reports {
		return t, true
	}
	r := byInterface[reflect.TypeFor[T]()]
	if r == nil {
		return t, true
	}
	c := rep.Caps()
	if !*r.field(&c) {
		return zero, false
	}
	return t, true
}
