package clustertest

import (
	"strings"
	"testing"
)

func TestCheckAnswers(t *testing.T) {
	const notice = "Interrupted: cut off."
	queued := func(s string) bool { return strings.HasPrefix(s, "Queued:") }
	p := []string{"a0", "a1", "a2", "next"}
	for _, c := range []struct {
		name    string
		prompts []string
		said    []string
		cut     int
		want    []string // a piece of each problem, in order
	}{
		{"each once", p, []string{"a0", "a1", "Queued: 1", "a2", "next"}, -1, nil},
		{"answered before the notice, the next after it", p, []string{"a0", "a1", "⚙️ " + notice, "Queued: 1", "a2", "next"}, 2, nil},
		{"the cut-off prompt whole before and after", p, []string{"a0", "a1", notice, "a1", "a2", "next"}, 2, nil},
		{"the cut-off prompt cut short before", []string{"the quick brown fox"}, []string{"the quick", notice, "the quick brown fox"}, 1, nil},
		{"the cut-off prompt not answered before", p, []string{"a0", notice, "a1", "a2", "next"}, 1, nil},
		{"answered twice after the notice (the harness's thread 1)", p, []string{"a0", "a1", notice, "Queued: 1", "a2", "next", "Queued: 1", "next"}, 2,
			[]string{`"next" answered 2 times`}},
		{"answered twice, no notice", p, []string{"a0", "a1", "a1", "a2", "next"}, -1, []string{`"a1" answered 2 times`}},
		{"two prompts before and after the notice", p, []string{"a0", "a1", notice, "a0", "a1", "a2", "next"}, 2,
			[]string{"2 prompts answered both", `"a0" answered 2 times`, `"a1" answered 2 times`}},
		{"twice after the notice the cut-off prompt", p, []string{"a0", "a1", notice, "a1", "a1", "a2", "next"}, 2,
			[]string{`"a1", the prompt cut off, answered 1 times before the notice (0 cut short) and 2 after`}},
		{"cut short without a notice", p, []string{"a", "a0", "a1", "a2", "next"}, -1, []string{`said "a", which answers no prompt`}},
		{"cut short, never answered whole", []string{"the quick brown fox"}, []string{"the quick", notice}, 1,
			[]string{`said "the quick", which answers no prompt`, "answered 0 times"}},
		{"a prompt not answered", p, []string{"a0", "a1", "a2"}, -1, []string{`"next" answered 0 times`}},
		{"something else said", p, []string{"a0", "a1", "Couldn't resume", "a2", "next"}, -1, []string{`said "Couldn't resume"`}},
		{"told twice", p, []string{"a0", notice, "a1", notice, "a2", "next"}, 3, []string{"told twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cut, problems := CheckAnswers(c.prompts, c.said, notice, queued)
			if cut != c.cut {
				t.Errorf("cut at %d, want %d", cut, c.cut)
			}
			if len(problems) != len(c.want) {
				t.Fatalf("problems %q, want %d like %q", problems, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(problems[i], w) {
					t.Errorf("problem %q, want it to say %q", problems[i], w)
				}
			}
		})
	}
}
