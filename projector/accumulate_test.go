package projector

import (
	"strings"
	"testing"
)

func TestAccumulator(t *testing.T) {
	type chunk struct{ id, text string }
	long := strings.Repeat("a long chunk of text ", 3) // 63 runes
	tests := []struct {
		name    string
		chunks  []chunk
		want    string
		newMsgs int
	}{
		{"deltas append", []chunk{{"", "Hel"}, {"", "lo, "}, {"", "world"}}, "Hello, world", 0},
		{"empty chunks ignored", []chunk{{"", ""}, {"", "a"}, {"", ""}, {"", "b"}}, "ab", 0},
		{"snapshots replace", []chunk{{"", "The answer"}, {"", "The answer is"}, {"", "The answer is 42."}}, "The answer is 42.", 0},
		{"snapshot after empty first chunk", []chunk{{"", ""}, {"", "Freeze,"}, {"", "Freeze, changelog,"}}, "Freeze, changelog,", 0},
		{"repeated final snapshot dropped", []chunk{{"", "One"}, {"", "One two"}, {"", "One two"}}, "One two", 0},
		{"shorter snapshot dropped", []chunk{{"", "One"}, {"", "One two"}, {"", "One"}}, "One two", 0},
		{"short repeats kept", []chunk{{"", "ha"}, {"", "ha"}, {"", "ha"}}, "hahaha", 0},
		{"newline repeats kept", []chunk{{"", "a"}, {"", "\n\n"}, {"", "\n\n"}, {"", "b"}}, "a\n\n\n\nb", 0},
		{"long immediate repeat dropped", []chunk{{"", "x"}, {"", long}, {"", long}}, "x" + long, 0},
		{"long repeat not immediate kept", []chunk{{"", long}, {"", "y"}, {"", long}}, long + "y" + long, 0},
		{"delta mode locks: later prefix-like chunk appends", []chunk{{"", "ab"}, {"", "c"}, {"", "abcd"}}, "abcabcd", 0},
		{"new messageId starts a new message", []chunk{{"m1", "First."}, {"m2", "Second"}, {"m2", "Second."}}, "First.Second.", 1},
		{"snapshots per message", []chunk{{"m1", "A"}, {"m1", "AB"}, {"m2", "C"}, {"m2", "CD"}}, "ABCD", 1},
		{"first messageId is not new", []chunk{{"m1", "x"}}, "x", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a Accumulator
			var got strings.Builder
			n := 0
			for _, c := range tc.chunks {
				d, nm := a.Add(c.id, c.text)
				got.WriteString(d)
				if nm {
					n++
				}
			}
			if got.String() != tc.want {
				t.Errorf("text = %q, want %q", got.String(), tc.want)
			}
			if n != tc.newMsgs {
				t.Errorf("new messages = %d, want %d", n, tc.newMsgs)
			}
		})
	}
}
