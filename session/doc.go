// Package session binds chat threads to ACP sessions and runs them: the
// Router takes every inbound message from the channel adapters, applies
// the access policy, recognises stop requests (package abort) before
// anything else, answers permission prompts, and queues prompts per
// thread under the channel's busy policy (queue or interrupt).
//
// Each thread's state is a thread.Machine, a pure state machine (no I/O, no
// goroutines, no clock): Machine.Apply(now, event) returns the effects to
// perform and when to call again. One owner goroutine per thread
// (owner.Thread, package thread/owner) runs it and performs its effects;
// the router only sends events to the thread's inbox, so nothing locks
// thread state, and the thread asks the router for what spans threads
// through owner.Host. A thread with
// no agent, no turn, nothing queued and nothing to deliver leaves memory
// after Threads.EvictAfter; its next message brings it back from the
// store. ARCHITECTURE.md lists the machine's events and effects.
//
// Bindings, pending permission prompts, running turns, per-turn usage and
// the transcript are kept in the store; every raw frame goes to the
// session's event log, which is closed only once the agent has exited.
//
// It writes none of the words people read: it says what happened as
// typed outcomes (package sysmsg) and tells the projector, which renders
// permission prompts and a stopped turn's end (Projector.StopTurn).
//
// A shutdown (the Run context ends) tells every thread whose turn it cuts
// off, expires pending permission prompts (buttons removed), cancels the
// turns and stops the agents; what it cannot post within
// Limits.ShutdownGrace is left in the store for the next start to post.
package session
