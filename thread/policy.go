package thread

// Busy policies: what a message does while a turn runs in its thread.
const (
	// BusyQueue runs the message after the current turn (the thread is
	// told it is queued).
	BusyQueue = "queue"
	// BusyInterrupt cancels the running turn, then runs the message.
	BusyInterrupt = "interrupt"
)

// Permission policies: how session/request_permission is answered.
const (
	// PermissionAsk shows the request to people as buttons (or numbered
	// choices) and waits for an approver.
	PermissionAsk = "ask"
	// PermissionApproveReads allows read, search and think tools
	// without asking and asks for the rest.
	PermissionApproveReads = "approve-reads"
	// PermissionApproveAll allows everything without asking.
	PermissionApproveAll = "approve-all"
	// PermissionDenyAll rejects everything without asking.
	PermissionDenyAll = "deny-all"
)
