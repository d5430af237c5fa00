package session

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/sysmsg"
)

func displayName(a channels.Author) string { return sysmsg.Who(a.Name, a.ID) }

func stopTyping(l *dispatch.Lane) { l.StopTyping() }
