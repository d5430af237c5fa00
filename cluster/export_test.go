package cluster

import "time"

// PartitionOf is the inbound partition of a thread's events.
var PartitionOf = partitionOf

// SetForwardTimes sets how long a forwarder waits for a word from the
// owner and how often an owner taking a forwarded event says so, until
// the test ends.
func SetForwardTimes(t interface{ Cleanup(func()) }, silence, progress time.Duration) {
	s, p := forwardSilence, forwardProgress
	forwardSilence, forwardProgress = silence, progress
	t.Cleanup(func() { forwardSilence, forwardProgress = s, p })
}

// SetAckWait sets the inbound consumers' ack wait and the hook told of
// each word of an owner that it is still taking an event, until the test
// ends.
func SetAckWait(t interface{ Cleanup(func()) }, wait time.Duration, onProgress func()) {
	w, p := ackWaitSet, progressed
	ackWaitSet, progressed = wait, onProgress
	t.Cleanup(func() { ackWaitSet, progressed = w, p })
}

// Sign returns ev signed by s, as Inbound.Message signs it.
func Sign(s *Signer, ev Event) Event {
	if err := s.sign(&ev); err != nil {
		panic(err)
	}
	return ev
}
