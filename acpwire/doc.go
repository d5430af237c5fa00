// Package acpwire decodes ACP (Agent Client Protocol) JSON-RPC 2.0 frames,
// one NDJSON line at a time, without reflection.
//
// [Decode] is the hot path of the gateway: it reads the envelope of every
// frame and fully decodes session/update notifications into a
// projector.Update, routing only by the raw sessionUpdate string. It
// validates the whole line as strictly as encoding/json.Valid does, so a
// truncated or otherwise malformed line is reported with a [*DecodeError]
// and can be skipped.
//
// Ownership: the []byte fields of a [Frame] (ID, Params, Result,
// RPCError.Data) alias the decoded line and are only valid as long as the
// line is. Every string is a copy (or an interned constant) and may be kept.
// ToolUpdate.RawInput and RawOutput are copies too. The slices of an Update
// (Plan, Commands, Config, Tool.Content, Tool.Locations) are allocated afresh
// for each frame and are never reused, so a consumer may keep them. A Frame
// may be reused for the next line; Decode resets it first.
package acpwire
