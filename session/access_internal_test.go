package session

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
		acc  access
		in   channels.Inbound
		want bool
	}{
		{"no operators, no approvers: whoever may prompt", access{rule: AccessRule{Users: []string{"ann"}}, hasRule: true}, in("ann"), true},
		{"no operators: the approvers", access{rule: AccessRule{Approvers: []string{"ann"}}, hasRule: true, open: true}, in("bob"), false},
		{"no operators: an approver", access{rule: AccessRule{Approvers: []string{"ann"}}, hasRule: true, open: true}, in("ann"), true},
		{"operators replace the approvers", access{rule: AccessRule{Approvers: []string{"ann"}, Operators: []string{"bob"}}, hasRule: true, open: true}, in("ann"), false},
		{"an operator", access{rule: AccessRule{Approvers: []string{"ann"}, Operators: []string{"bob"}}, hasRule: true, open: true}, in("bob"), true},
		{"an operator by role", access{rule: AccessRule{Operators: []string{"ops"}}, hasRule: true, open: true}, in("cid", "ops"), true},
		{"an operator who may not prompt", access{rule: AccessRule{Users: []string{"ann"}, Operators: []string{"bob"}}, hasRule: true}, in("bob"), false},
	}
	for _, c := range cases {
		if got := c.acc.mayOperate(c.in); got != c.want {
			t.Errorf("%s: mayOperate = %v, want %v", c.name, got, c.want)
		}
	}
}
