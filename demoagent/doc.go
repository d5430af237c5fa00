// Package demoagent is a scripted Agent Client Protocol agent with no
// network and no model: the gateway's embedded default agent (`gateway
// demo-agent` serves it over stdio) and the agent of the end-to-end tests.
//
// It is built on the agent side of github.com/coder/acp-go-sdk and behaves
// like the real agents the gateway meets, noise included: it streams
// updates for a session before answering session/new, asks for permission
// before announcing the tool call it refers to, repeats identical tool and
// usage snapshots, renames tools late, and can send a sessionUpdate tag that
// no SDK knows. The first word of a prompt picks a scenario (send "help"
// for the list); the rest of the prompt is its argument.
//
// Sessions persist in a state directory as one small JSON file each, so
// that a new process can session/load them and replay their history.
// Delays use the time package, so tests that run [Run] in-process inside a
// testing/synctest bubble take no wall-clock time.
package demoagent
