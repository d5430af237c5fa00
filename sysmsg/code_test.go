package sysmsg_test

import (
	"testing"

	"github.com/acpgw/gateway/sysmsg"
)

// TestCode: a code span whose fence no backtick run inside can close, and
// padding where the text starts or ends with a backtick.
func TestCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/help", "`/help`"},
		{"run `make` now", "``run `make` now``"},
		{"a ``b`` c", "```a ``b`` c```"},
		{"`x", "`` `x ``"},
		{"x`", "`` x` ``"},
		{"two\nlines", "`two lines`"},
	} {
		if got := sysmsg.Code(tc.in); got != tc.want {
			t.Errorf("Code(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
