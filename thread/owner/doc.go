// Package owner runs one chat thread: Thread is its owner, one goroutine
// that runs the thread's Machine (package thread) and performs the
// effects it asks for. Everything else (the router, the agent's tap, the
// agent's permission and question callbacks, the delivery lane's
// callbacks, the child goroutines that start the agent or wait for a
// prompt's answer) only sends events to the thread's inbox, so nothing
// locks a thread's state. The owner projects the agent's updates
// (package projector) into the thread's delivery lane (package
// dispatch); a slow platform never stalls an agent, and a stop never
// waits behind delivery or the store (the thread's writes go through
// its saves, in order, apart from the owner).
//
// A thread's dependencies are one value, Deps: the store, the agents,
// the workspaces, the delivery settings, the hooks, and Host, what the
// router does for a thread (the settings a reload changes, the process
// slots, the registry, answers outside the thread's lane). A thread
// never reaches the router otherwise and takes no router lock.
//
// It writes none of the words people read: it says what happened as
// typed outcomes (package sysmsg) and tells the projector.
package owner
