package session

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/thread"
)

func displayName(a channels.Author) string { return thread.DisplayName(a) }
