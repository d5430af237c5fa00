// Package thread is one chat thread's logic: its Machine, a pure state
// machine (no I/O, no goroutines, no clock) told Events and answering
// with Effects and when to call again; the policy constants it decides
// by (busy, permissions); and the View, which turns the effects people
// see into projector and delivery-lane calls, the same in production
// (package session's owner goroutine, on the lane's wall clock) and in
// `gateway replay` (package replay, on a virtual clock).
//
// It performs no effect that reaches a store or an agent: its caller
// does, and tells the machine the outcome as the next Event.
// ARCHITECTURE.md lists the events and effects.
package thread
