package channels

// AgentCommandPicker names the request for the thread's agent commands
// (available_commands_update) as suggestions: an adapter sends
// Inbound.Suggest with Command.Name AgentCommandPicker and what was typed
// as Command.Args, and gets the agent's commands whose name or
// description holds it, best first, each as Option{ID: name, Label:
// "name — description"}.
//
// It is no gateway command (ParseCommand does not know it, /help does not
// list it): Discord registers one application command of this name whose
// autocomplete offers the agent's commands of the thread it is used in,
// and which sends the chosen one to the agent as a prompt "/name input".
// The agent's commands differ per agent and change during a session,
// while Discord allows 200 command creations a day per guild, so they are
// never registered one by one.
const AgentCommandPicker = "agent-command"
