package session

import (
	"time"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/thread/owner"
)

// AbortConfig is the stop-word configuration (package abort).
type AbortConfig = abort.Config

// Threads is the threads section.
type Threads struct {
	// EvictAfter drops a thread from memory once it has had no agent
	// process, no turn, nothing queued, no permission prompt and nothing
	// left to deliver for this long; its next message brings it back
	// from the store (its session resumes). 0 (never) to 24h; default
	// 10m.
	EvictAfter time.Duration `koanf:"evictAfter" validate:"min=0,max=24h"`
}

// DefaultThreads returns the documented defaults.
func DefaultThreads() Threads { return Threads{EvictAfter: 10 * time.Minute} }

// The settings a thread runs by are the thread owner's (package
// thread/owner); the router takes them as they are.
type (
	Policy           = owner.Policy
	Context          = owner.Context
	Backfill         = owner.Backfill
	PermissionConfig = owner.PermissionConfig
	AccessRule       = owner.AccessRule
	Limits           = owner.Limits
	Reactions        = owner.Reactions
	Budgets          = owner.Budgets
	FrameLog         = owner.FrameLog
)

// The reactions modes.
const (
	ReactionsOn  = owner.ReactionsOn
	ReactionsOff = owner.ReactionsOff
)

// The documented defaults.
var (
	DefaultPolicy           = owner.DefaultPolicy
	DefaultPermissionConfig = owner.DefaultPermissionConfig
	DefaultContext          = owner.DefaultContext
	DefaultReactions        = owner.DefaultReactions
)
