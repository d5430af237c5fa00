package owner

import (
	"testing"

	"github.com/acpgw/gateway/channels"
)

func TestMayOperate(t *testing.T) {
	in := func(id string, roles ...string) channels.Inbound {
		return channels.Inbound{Author: channels.Author{ID: id, Roles: roles}, Thread: channels.ThreadRef{Platform: "discord", Channel: "c"}}
	}
	cases := []struct {
		name string
		acc  Access
		in   channels.Inbound
		want bool
	}{
		{"no operators, no approvers: whoever may prompt", Access{Rule: AccessRule{Users: []string{"ann"}}, HasRule: true}, in("ann"), true},
		{"no operators: the approvers", Access{Rule: AccessRule{Approvers: []string{"ann"}}, HasRule: true, Open: true}, in("bob"), false},
		{"no operators: an approver", Access{Rule: AccessRule{Approvers: []string{"ann"}}, HasRule: true, Open: true}, in("ann"), true},
		{"operators replace the approvers", Access{Rule: AccessRule{Approvers: []string{"ann"}, Operators: []string{"bob"}}, HasRule: true, Open: true}, in("ann"), false},
		{"an operator", Access{Rule: AccessRule{Approvers: []string{"ann"}, Operators: []string{"bob"}}, HasRule: true, Open: true}, in("bob"), true},
		{"an operator by role", Access{Rule: AccessRule{Operators: []string{"ops"}}, HasRule: true, Open: true}, in("cid", "ops"), true},
		{"an operator who may not prompt", Access{Rule: AccessRule{Users: []string{"ann"}, Operators: []string{"bob"}}, HasRule: true}, in("bob"), false},
	}
	for _, c := range cases {
		if got := c.acc.MayOperate(c.in); got != c.want {
			t.Errorf("%s: mayOperate = %v, want %v", c.name, got, c.want)
		}
	}
}
