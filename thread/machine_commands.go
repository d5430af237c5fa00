package thread

// The gateway's commands (/status, /new, /model, …) as events of the
// thread machine: who may give them, and what waits for an idle thread.

import (
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// CommandIn is one of the gateway's commands (In.Command), other than
// /stop, from someone who may prompt; Operator says whether they may
// also change the session (operators, else approvers).
type CommandIn struct {
	In       channels.Inbound
	Operator bool
}

func (CommandIn) isEvent() {}

// SwitchAgent moves the thread to agent Agent (/agent, its name checked
// by the owner), by By, an operator: a new session of that agent.
type SwitchAgent struct {
	By    channels.Author
	Agent string
}

func (SwitchAgent) isEvent() {}

// AttachSession binds the agent's session ID to the thread (/attach, the
// id checked by the owner), by By, an operator.
type AttachSession struct {
	By channels.Author
	ID string
}

func (AttachSession) isEvent() {}

// The commands' effects.
type (
	// RunCommand answers or performs command In with the session's state
	// the owner keeps (options, commands): /help, /model, /mode,
	// /effort, /set.
	RunCommand struct{ In channels.Inbound }
	// ShowUsage answers /usage (In) with the thread's usage, privately
	// where the platform can.
	ShowUsage struct{ In channels.Inbound }
	// ShowWorkspace answers /workspace (In): the thread's worktree.
	ShowWorkspace struct{ In channels.Inbound }
	// ShowDiff answers /diff (In): what changed in the worktree, and the
	// patch as a file.
	ShowDiff struct{ In channels.Inbound }
	// RefuseCommand tells In's author privately that they may not give
	// that command.
	RefuseCommand struct{ In channels.Inbound }
	// ShowStatus answers /status (In) with the machine's part of it: the
	// running turn (Starting: its agent starts), who started it and when,
	// and how many messages wait.
	ShowStatus struct {
		In       channels.Inbound
		Turn     bool
		Starting bool
		By       string
		Since    time.Time
		Queued   int
	}
	// EndSession ends the thread's session for /new: the session is
	// closed, its agent process stopped (Stop) and the binding forgets
	// the session, so the next message starts a new one. By asked. Agent,
	// if set, is the agent the thread moves to (/agent); Attach, if set,
	// the agent's session the thread is bound to instead (/attach), which
	// the next message resumes (the old one is not closed).
	EndSession struct {
		By     channels.Author
		Stop   bool
		Agent  string
		Attach string
	}
)

func (RunCommand) isEffect()    {}
func (ShowUsage) isEffect()     {}
func (ShowWorkspace) isEffect() {}
func (ShowDiff) isEffect()      {}
func (RefuseCommand) isEffect() {}
func (ShowStatus) isEffect()    {}
func (EndSession) isEffect()    {}

// operatorOnly reports whether command name changes the session, so that
// only operators may give it.
func operatorOnly(name string) bool {
	switch name {
	case channels.CommandNew, channels.CommandAgent, channels.CommandAttach, channels.CommandModel, channels.CommandMode, channels.CommandEffort, channels.CommandSet:
		return true
	}
	return false
}

// command applies a gateway command.
func (m *Machine) command(e CommandIn, fx []Effect) []Effect {
	if m.shutting || e.In.Command == nil {
		return fx
	}
	name := e.In.Command.Name
	// Asking for the choices changes nothing: anyone who may prompt may.
	changes := operatorOnly(name) && (name == channels.CommandNew || e.In.Command.Args != "")
	if changes && !e.Operator {
		return append(fx, RefuseCommand{In: e.In})
	}
	switch name {
	case channels.CommandUsage:
		fx = append(fx, ShowUsage{In: e.In})
	case channels.CommandWorkspace:
		fx = append(fx, ShowWorkspace{In: e.In})
	case channels.CommandDiff:
		fx = append(fx, ShowDiff{In: e.In})
	case channels.CommandStatus:
		s := ShowStatus{In: e.In, Queued: len(m.queue)}
		switch {
		case m.turn != nil:
			s.Turn, s.By, s.Since = true, displayName(m.turn.in.Author), m.turn.started
		case m.start != nil:
			s.Starting, s.By = true, displayName(m.start.in.Author)
		}
		fx = append(fx, s)
	case channels.CommandNew:
		fx = m.endSession(EndSession{By: e.In.Author}, "/"+name, fx)
	case channels.CommandAgent, channels.CommandAttach:
		if e.In.Command.Args != "" && (m.Active() || len(m.queue) > 0) {
			return append(fx, Notify{Notice: sysmsg.CommandBusy{Command: "/" + name}})
		}
		// The owner checks the name (SwitchAgent) or the session
		// (AttachSession); without one it lists them.
		fx = append(fx, RunCommand{In: e.In})
	default:
		fx = append(fx, RunCommand{In: e.In})
	}
	return fx
}

// endSession ends the thread's session (EndSession) once nothing runs or
// waits; else the thread is told that command waits.
func (m *Machine) endSession(f EndSession, command string, fx []Effect) []Effect {
	if m.Active() || len(m.queue) > 0 {
		return append(fx, Notify{Notice: sysmsg.CommandBusy{Command: command}})
	}
	f.Stop = m.agent == AgentReady
	m.agent = AgentNone
	m.reapAt = time.Time{}
	return append(fx, f)
}
