package sysmsg

import "fmt"

// WorkerLost: the worker that ran the thread's turn stopped without
// finishing it (it died, or lost the thread); another worker took the
// thread up and tells it. Again: that worker asks the agent the same
// message again (once per message; a message already asked again is
// not). Dropped counts the message's attachments whose content could not
// be carried over (images; large text files): the agent is asked
// without them.
// Later counts the messages sent after it, which the machine had taken
// and not answered either, that are answered again too, in turn.
type WorkerLost struct {
	Again   bool
	Dropped int
	Later   int
}

func (w WorkerLost) Body() string {
	const lost = "Interrupted: the machine running this thread's agent went away while the agent was working on this, so its answer stopped short."
	if !w.Again {
		return lost + " Another one has taken the thread over; send your message again if it still matters." + w.later()
	}
	s := lost + " Another one has taken the thread over and is answering your message again"
	switch {
	case w.Dropped == 1:
		s += ", without an attached file: its content could not be carried over; attach it again if the agent needs it"
	case w.Dropped > 1:
		s += fmt.Sprintf(", without %d of its attached files: their content could not be carried over; attach them again if the agent needs them", w.Dropped)
	}
	return s + "." + w.later()
}

// later says which of the messages sent after are answered.
func (w WorkerLost) later() string {
	switch {
	case w.Later == 1:
		return " The message you sent after it is answered next."
	case w.Later > 1:
		return fmt.Sprintf(" The %d messages you sent after it are answered in turn.", w.Later)
	}
	return ""
}
