package sysmsg

// WorkerLost: the worker that ran the thread's turn stopped without
// finishing it (it died, or lost the thread); another worker took the
// thread up and tells it, before it answers the next message.
type WorkerLost struct{}

func (WorkerLost) Body() string {
	return "Interrupted: the machine running this thread's agent went away while the agent was working on this, so its answer stopped short. Another one has taken the thread over; send your message again if it still matters."
}
