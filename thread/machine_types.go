package thread

// The thread machine's vocabulary: the events it is told and the effects
// it asks for. Both are sealed unions: only this package adds members.

import (
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// Event is something that happened to a thread; Machine.Apply takes it.
type Event interface{ isEvent() }

// The events.
type (
	// PromptIn is a person's message to run: access checked, not a stop,
	// not the answer to a prompt. Caught: the catch-up already told the
	// thread it is in line, so no "queued" notice.
	PromptIn struct {
		In     channels.Inbound
		Caught bool
	}
	// StopIn is a stop: someone said "stop" (or pressed Stop), or
	// Interrupt, a new message under the interrupt policy.
	// All: the queued messages are dropped too ("stop all"); a plain stop
	// ends the running turn only, and the next queued message runs.
	StopIn struct {
		By        channels.Author
		Interrupt bool
		All       bool
	}
	// Received is a person's message the router let in, the thread's one
	// way in for them: a stop (Stop; All drops the queued messages too),
	// a numbered answer to the oldest permission prompt (Numbered: the
	// channel has no buttons, so "1" or "2." answers; Approver: the
	// author may), or a prompt, which the machine marks (MarkPrompt) and
	// runs as PromptIn (Caught as there). A message whose id the thread
	// took before is dropped (Duplicate), unless Retaken: the key of the
	// mark that stands for it already, a prompt a take-over asks again.
	Received struct {
		In        channels.Inbound
		Stop, All bool
		Caught    bool
		Numbered  bool
		Approver  bool
		Retaken   time.Time
	}
	// SlotTaken: the start of the message has its process slot (or needs
	// none); the start timeout runs from now.
	SlotTaken struct{}
	// AgentStarted: the start the machine asked for (StartAgent) ended;
	// Err is nil when the agent and its session are ready. Workspace:
	// it failed because the thread's workspace could not be made.
	AgentStarted struct {
		Err       error
		Workspace bool
	}
	// TurnDone: the agent answered the prompt (BeginTurn), or the call
	// failed (Err). Exited: because its process exited.
	TurnDone struct {
		StopReason string
		Err        error
		Exited     bool
	}
	// AgentOutput: the agent said something for the running turn.
	AgentOutput struct{}
	// ProcessExited: the thread's agent process exited on its own.
	ProcessExited struct{}
	// PermissionAsked: the agent asks people for a permission (the
	// channel's policy did not answer it); the prompt id is ID and it
	// waits at most Timeout.
	PermissionAsked struct {
		ID      string
		Timeout time.Duration
		Kind    string // the tool's kind (read, edit, execute, …), for the policy
		// Options are the prompt's option ids, in order, for a numbered
		// answer (Received.Numbered).
		Options []string
	}
	// PermissionAnswer: someone chose Option of prompt ID. Approver says
	// whether they may answer prompts.
	PermissionAnswer struct {
		ID       string
		Option   string
		By       channels.Author
		Approver bool
	}
	// PermissionUnshown: prompt ID could not be shown in the thread.
	PermissionUnshown struct{ ID string }
	// PermissionWithdrawn: the agent no longer waits for prompt ID.
	PermissionWithdrawn struct{ ID string }
	// ReapIdle asks the thread to stop its agent if it is idle (another
	// thread needs the process slot).
	ReapIdle struct{ Why string }
	// Shutdown: the gateway is stopping.
	Shutdown struct{}
	// Forget: By deleted the thread. It ends as at a shutdown, but
	// silently: its turn is stopped, its prompts cancelled, its agent
	// stopped (told to end the session, unless Archived: the thread may
	// come back and resume it); then the owner returns.
	Forget struct {
		By       channels.Author
		Archived bool
	}
	// Tick: the wake time Apply returned has come.
	Tick struct{}
	// Configure replaces the settings (a turn's policy, a reload).
	Configure struct{ Config MachineConfig }
	// LaneIdle answers CheckLane: whether the delivery lane has nothing
	// left to deliver.
	LaneIdle struct{ Idle bool }
	// ReactionStop: By reacted channels.ReactStop on Message; MayStop
	// says whether they may stop turns. On the prompt or a message of the
	// running turn (or the start under way) it stops as "stop" does.
	ReactionStop struct {
		By      channels.Author
		Message channels.MessageID
		MayStop bool
	}
	// Posted: the gateway posted message ID in the thread (for stop
	// reactions on the running turn's messages).
	Posted struct{ ID channels.MessageID }
)

func (PromptIn) isEvent()            {}
func (Received) isEvent()            {}
func (StopIn) isEvent()              {}
func (SlotTaken) isEvent()           {}
func (AgentStarted) isEvent()        {}
func (TurnDone) isEvent()            {}
func (AgentOutput) isEvent()         {}
func (ProcessExited) isEvent()       {}
func (PermissionAsked) isEvent()     {}
func (PermissionAnswer) isEvent()    {}
func (PermissionUnshown) isEvent()   {}
func (PermissionWithdrawn) isEvent() {}
func (ReapIdle) isEvent()            {}
func (Shutdown) isEvent()            {}
func (Forget) isEvent()              {}
func (Tick) isEvent()                {}
func (Configure) isEvent()           {}
func (LaneIdle) isEvent()            {}
func (ReactionStop) isEvent()        {}
func (Posted) isEvent()              {}

// Effect is what the machine asks its owner to do, in order.
type Effect interface{ isEffect() }

// The effects.
type (
	// StartAgent prepares the turn of In: its files, a process slot when
	// NeedProcess (then SlotTaken), the agent and its session; it ends
	// with AgentStarted. Typing shows from now on.
	StartAgent struct {
		In          channels.Inbound
		NeedProcess bool
	}
	// CancelStart gives up the start under way; Timeout: it took too
	// long. AgentStarted follows.
	CancelStart struct{ Timeout bool }
	// BeginTurn sends the prompt of In as turn Seq, started At; TurnDone
	// follows.
	// Mark is the key of the turn's mark (which stays until the turn's
	// end was delivered): the one MarkPrompt wrote when Marked, else a
	// new one, which the owner writes with the turn's session.
	BeginTurn struct {
		In     channels.Inbound
		Seq    int
		At     time.Time
		Mark   time.Time
		Marked bool
	}
	// Duplicate: a message the thread took already came again (a
	// platform's or the cluster stream's redelivery); it is dropped.
	Duplicate struct{ ID channels.MessageID }
	// MarkPrompt records that the thread accepted In (a
	// store.RunningTurn keyed Key): until its answer was delivered, a
	// worker taking the thread over asks it again and a restart tells
	// the thread it was cut off.
	MarkPrompt struct {
		In  channels.Inbound
		Key time.Time
	}
	// ClearMark clears mark Key: its prompt began no turn (a stop
	// dropped it, its start failed, it was refused).
	ClearMark struct{ Key time.Time }
	// CancelTurn sends session/cancel.
	CancelTurn struct{}
	// KillAgent kills the agent's process (it ignored the cancel).
	KillAgent struct{}
	// StopAgent stops the thread's agent process (idle, or the shutdown)
	// and lets its slot go; the session stays bound, unless End: the
	// thread was deleted, and the agent is first told to close and
	// delete the session, where it can.
	StopAgent struct {
		Why string
		End bool
	}
	// DropAgent forgets an agent process that exited, freeing its slot.
	DropAgent struct{}
	// StopTyping stops the typing indicator.
	StopTyping struct{}
	// Notify tells the thread Notice (an outcome; sysmsg renders it): at
	// once, outside the turn's order, or InTurn, in order with the turn's
	// output. Key, if set, names it so that the turn's end replaces it.
	Notify struct {
		Notice sysmsg.Notice
		Key    string
		InTurn bool
		// Settle: the notice Key, shown earlier, is corrected to Notice
		// where it can be edited (and dropped if not shown yet), never
		// posted again: what it said stopped being true.
		Settle bool
	}
	// QueueKept tells the person who stopped (privately where the
	// platform can) that Waiting queued messages stay and run next, and
	// how to drop them.
	QueueKept struct{ Waiting int }
	// ShowPrompt shows permission prompt ID with its options.
	ShowPrompt struct{ ID string }
	// AnswerByPolicy answers permission prompt ID as the channel's policy
	// says (Allow, else reject), without asking anyone; the thread is
	// told.
	AnswerByPolicy struct {
		ID    string
		Allow bool
	}
	// SettlePrompt answers prompt ID to the agent and shows the outcome:
	// Status answered (Option, By), expired (the reject option) or
	// cancelled (By; NotShown: it could not be shown). Unshown: it was
	// never shown (asked after a stop); nothing to edit or record.
	// Shutdown: the gateway stops (the message says it restarted).
	SettlePrompt struct {
		ID       string
		Status   store.PromptStatus
		Option   string
		By       channels.Author
		NotShown bool
		Unshown  bool
		Shutdown bool
	}
	// PromptNotWaiting answers a click on a prompt that no longer waits.
	PromptNotWaiting struct{ ID string }
	// NotApprover answers a click by someone who may not answer.
	NotApprover struct{ ID string }
	// EndTurn closes the turn: projector, lane, records.
	EndTurn struct{ Turn TurnOutcome }
	// TellInterrupted tells the thread that the shutdown cut its turn (or
	// its agent's start) off.
	TellInterrupted struct{}
	// Exit: the thread is done (after Shutdown); its owner returns.
	Exit struct{}
	// CheckLane asks whether the delivery lane is idle (LaneIdle).
	CheckLane struct{}
	// Evict drops the thread: it has no agent, no turn, nothing queued
	// and an idle lane, and has had nothing to do for EvictAfter. The
	// owner returns unless an event came meanwhile; the next message
	// brings the thread back from the store.
	Evict struct{}
	// React shows Emoji as the gateway's one reaction on the person's
	// message Msg, replacing the one before; AtTurnEnd: once the turn's
	// output is delivered.
	React struct {
		Msg       channels.MessageID
		Emoji     string
		AtTurnEnd bool
	}
)

func (StartAgent) isEffect()       {}
func (CancelStart) isEffect()      {}
func (BeginTurn) isEffect()        {}
func (Duplicate) isEffect()        {}
func (MarkPrompt) isEffect()       {}
func (ClearMark) isEffect()        {}
func (CancelTurn) isEffect()       {}
func (KillAgent) isEffect()        {}
func (StopAgent) isEffect()        {}
func (DropAgent) isEffect()        {}
func (StopTyping) isEffect()       {}
func (Notify) isEffect()           {}
func (ShowPrompt) isEffect()       {}
func (AnswerByPolicy) isEffect()   {}
func (QueueKept) isEffect()        {}
func (SettlePrompt) isEffect()     {}
func (PromptNotWaiting) isEffect() {}
func (NotApprover) isEffect()      {}
func (EndTurn) isEffect()          {}
func (TellInterrupted) isEffect()  {}
func (Exit) isEffect()             {}
func (CheckLane) isEffect()        {}
func (Evict) isEffect()            {}
func (React) isEffect()            {}

// TurnOutcome is how a turn ended, for its records and its last notice.
type TurnOutcome struct {
	Seq        int
	Started    time.Time
	StopReason string
	Err        error
	Exited     bool
	// Stopper names who stopped it ("" = nobody); Interrupted: by a new
	// message; Killed: the agent ignored the cancel and was killed; Ack
	// is the lane key of the "Stopping…" notice.
	Stopper     string
	Interrupted bool
	Killed      bool
	Ack         string
	// Cut: the shutdown cut it off (it tells the thread). Forgotten:
	// the thread was deleted (Forget); nobody is left to tell.
	Cut       bool
	Forgotten bool
}

// MachineConfig is what the machine needs of the thread's settings.
type MachineConfig struct {
	Busy         string        // BusyQueue or BusyInterrupt
	Grace        time.Duration // a stopped turn's agent is killed after this
	StartTimeout time.Duration // 0: none
	IdleTimeout  time.Duration // 0: never reaped
	// Permissions is the channel's permission policy (PermissionAsk, …):
	// which requests are answered without asking (AnswerByPolicy).
	Permissions  string
	StallTimeout time.Duration // 0: silence is never told
	EvictAfter   time.Duration // 0: the thread is never dropped
	// Reactions: people's messages get status reactions (React);
	// ReactStallAfter: a turn silent this long gets the stalled one (0:
	// never).
	Reactions       bool
	ReactStallAfter time.Duration
}
