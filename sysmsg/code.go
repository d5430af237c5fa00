package sysmsg

import (
	"strings"

	"github.com/acpgw/gateway/tooldisplay"
)

// Code writes s as a Markdown code span that stays one whatever s holds:
// its fence is one backtick longer than the longest run of backticks in
// s, and s is padded with a space on each side when it starts or ends
// with a backtick (as CommonMark allows; the padding is not shown).
// Line breaks in s become spaces, as a code span shows them anyway.
func Code(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return tooldisplay.CodeSpan(s)
}
