// Package web is the local web chat: the gateway's embedded default
// platform. An Adapter serves one self-contained page (inline CSS and
// vanilla JavaScript, embedded in the binary) and the JSON API the page
// uses, and implements channels.Adapter, Editor, Typer, TypingStopper,
// Prompter and Uploader on the same in-memory threads. Threads are
// ThreadRef{Platform: "web", Channel: "local", Thread: <id>}.
//
// # State and its bounds
//
// The state lives in memory (and, optionally, in a file; see below). A
// thread has an id, a title (given, or the first line of its first
// prompt), a creation time, a typing flag and its messages. A message has an id, a
// role (user, assistant or system), an author, a kind (the replay kinds:
// text tool status notice plan thought permission; people write text), its
// current text, how often it was edited, and, for an unanswered prompt,
// its options. There is no bound on the number of threads, and a new one
// is never refused: Options.MaxThreadsInMemory (channels.web.maxThreadsInMemory,
// 200) bounds how many keep their messages in memory; with a state file the
// least recently active others are kept on disk beside it and read back when
// used (cold.go), without one they are forgotten. A thread keeps 1000
// messages (the oldest go first and can no longer be edited). A person's message is at most 64 KiB, a
// request body at most 1 MiB. The agent's own text is not truncated.
//
// # Persistence
//
// With Options.StateFile set (gateway run uses web-chat.json in its data
// directory) the threads and messages also survive a restart: New loads
// the file, and Run saves changes from a goroutine of its own, at most
// every 500 ms and once more when it returns, by writing a temporary file
// (mode 0600) and renaming it, so Post and Edit never wait for the disk.
// A restarted gateway shows the same threads with the same ids, so their
// bound agent sessions resume; unanswered prompts keep their options until
// the gateway edits them (it marks them expired at start). Typing flags
// are not saved. The memory bounds apply to what is loaded. The file is
// JSON with "version": 1 (API.md describes the format); a missing
// file means no threads, a corrupt one is logged and moved aside to
// <file>.corrupt, and one of a newer version is refused with an error log:
// the chat starts empty and leaves that file untouched (nothing is saved
// in that run).
//
// # Several gateways
//
// With Options.Shared set (gateway edge: the cluster's bucket), several
// gateways serve one chat. Each change is run on a copy of the thread it
// changes, written as records (a key per thread's details, message, typing
// state, session header, tool call's details; compare-and-set on the
// revision this gateway applied, run again when another came first), and
// every gateway applies every record, in order, to its own state and live
// streams; the operation returns once its own records came back. Ids and
// times are decided once, by the gateway that performs the change. Run
// reads the shared state before it listens. The state file is not used,
// and with a Shared that is also a SharedFiles the files are kept there.
//
// # HTTP API
//
// All bodies are JSON; errors are {"error": "..."} with a fitting status
// (400 bad input, 401 missing token, 403 refused host or origin or a
// body naming someone else, 404
// unknown thread or message, 405, 409, 413, 415 non-JSON body, 429 every
// thread in use, 503
// shutting down). API.md beside this file has the details and examples.
//
//	POST /api/threads                     {"title"?}            → 201 thread
//	GET  /api/threads                                           → {"threads": [{"id","title","created","typing"}]}, newest first
//	GET  /api/me                                                → {"id","name","fixed","agents"}: who the token says
//	POST /api/threads/{id}/messages       {"author"?,"text","agent"?} → 202 {"id"}; delivers an Inbound
//	GET  /api/threads/{id}/messages                             → {"messages": [...], "typing": bool}
//	POST /api/threads/{id}/stop           {"author"?, "all"?}   → 202 {"id"}; delivers Inbound{Stop: true, StopAll: all}
//	POST /api/threads/{id}/prompts/{msg}/answer {"author"?,"optionId"} → 202 {"id","reply"?}; delivers Inbound.Choice
//	GET  /api/threads/{id}/events                               → Server-Sent Events
//	GET  /api/events                                            → Server-Sent Events, thread list only
//	GET  /api/threads/{id}/socket, /api/socket                  → the same events over a WebSocket (the page's)
//	GET  /api/files/{name}                                      → a file the gateway put into a thread, as a download
//	GET  /                                                      → the page
//
// Who sent a request comes from its token (see Access); "author" and
// "authorId" in a body are optional and must not name anyone else. The handler of Run receives
// Inbound values on the request's goroutine, with Run's context, before the
// response is written. A message's and a stop's Reply appends a system
// notice to the thread. An answer's Reply that comes within one second is
// returned in the answer's response as "reply" (the page shows it to the
// person who clicked only); a later one becomes a system notice. Answering
// a message without options (already answered: Edit removes the options)
// is 409; the options stay until the gateway edits the prompt.
//
// # Live events
//
// An event stream sends "message" (a message was created or changed: the
// whole message), "typing" ({"typing": bool}) and "threads" (the whole
// thread list) events, and a comment line every 15 s while idle. On
// connect it first sends the current state: the thread list, every message
// and the typing flag; a reconnecting browser therefore needs no
// Last-Event-ID, and event ids are not sent. A stream that falls 256 events
// behind is closed, and the browser reconnects. The sockets send the same
// events as WebSocket messages {"event": name, "data": …}; the page uses
// them, because a browser keeps at most six HTTP/1.1 connections per host
// for all its tabs and an event stream holds one for as long as it is open.
//
// # Access
//
// The page itself is public. Who someone is comes from their token, never
// from a request's body: each of Options.Users is one person, "web:<name>",
// shown by name; Options.Token's holder is "web:owner"; without any token
// everyone is the one local user, "web:local". With a token set, every
// /api request needs one, as "Authorization: Bearer <token>" or
// "?token=<token>" (the page takes it from its own URL and asks GET
// /api/me who it is); tokens are compared in constant time. A body whose
// "authorId" (or, for a named token, "author") names someone else is
// refused with 403. On a loopback listener only local Host names are
// accepted (against DNS rebinding); a request with a foreign Origin is
// refused, and request bodies must be application/json, so other web
// sites cannot post into the chat. Run refuses to serve beyond loopback
// without a token.
package web
