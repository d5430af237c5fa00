package clustertest

import (
	"fmt"
	"strings"

	"github.com/acpgw/gateway/sysmsg"
)

// CheckAnswers checks what the bot said in a thread of the harness (each
// message's text as the platform shows it, in order) against the prompts
// the thread asked (each answered with its own text), and returns the
// index of the message telling the thread its turn was cut off (the one
// containing notice; -1 when none) and what is wrong, each problem one
// sentence.
//
// Every prompt is answered exactly once, with its text, except one at
// most: the prompt the kill cut off, which may have one answer before the
// notice (whole, or cut short: a beginning of its text) and has exactly
// one whole answer after it. Besides the answers and the notice (at most
// one), the bot says only what aside accepts (notices that answer no
// prompt and are not wrong, such as "queued").
func CheckAnswers(prompts, said []string, notice string, aside func(string) bool) (cut int, problems []string) {
	cut = -1
	for k, s := range said {
		if strings.Contains(s, notice) {
			if cut >= 0 {
				problems = append(problems, "told twice that its turn was cut off")
			}
			cut = k
		}
	}
	asked := map[string]bool{}
	for _, p := range prompts {
		asked[p] = true
	}
	before, after, short := map[string]int{}, map[string]int{}, map[string]int{}
	var partial []string // messages before the notice that answer no prompt whole
	for k, s := range said {
		switch {
		case strings.Contains(s, notice):
		case asked[s] && cut >= 0 && k < cut:
			before[s]++
		case asked[s]:
			after[s]++
		case aside(s):
		case cut >= 0 && k < cut && s != "":
			partial = append(partial, s)
		default:
			problems = append(problems, fmt.Sprintf("the bot said %q, which answers no prompt", s))
		}
	}
	// A message cut short is the beginning of the answer of a prompt not
	// answered before the notice and answered after it: the first such.
	for _, s := range partial {
		found := false
		for _, p := range prompts {
			if strings.HasPrefix(p, s) && before[p] == 0 && short[p] == 0 && after[p] > 0 {
				short[p]++
				found = true
				break
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("the bot said %q, which answers no prompt", s))
		}
	}
	var cutOff []string
	for _, p := range prompts {
		if before[p]+short[p] > 0 && after[p] > 0 {
			cutOff = append(cutOff, p)
		}
	}
	if len(cutOff) > 1 {
		problems = append(problems, fmt.Sprintf("%d prompts answered both before and after the cut-off notice, want one at most: %q", len(cutOff), cutOff))
	}
	for _, p := range prompts {
		b, a := before[p]+short[p], after[p]
		if len(cutOff) == 1 && cutOff[0] == p {
			if b != 1 || a != 1 {
				problems = append(problems, fmt.Sprintf("%q, the prompt cut off, answered %d times before the notice (%d cut short) and %d after, want at most once before and once after", p, b, short[p], a))
			}
			continue
		}
		if b+a != 1 {
			problems = append(problems, fmt.Sprintf("%q answered %d times (%d before a cut-off notice, %d after), want once", p, b+a, b, a))
		}
	}
	return cut, problems
}

// Waiting returns CheckAnswers' aside for the harnesses: a prompt waiting
// behind at most most others (one asked again after a take-over, and the
// message that brought the thread over), or for a free agent (a worker
// that took threads over runs as many agents as it may), is told so (the
// queued notice corrected once its message ran); that answers no prompt
// and is not wrong.
func Waiting(most int) func(string) bool {
	return func(s string) bool {
		// A queued notice once its message ran, or a stop dropped it.
		if strings.Contains(s, sysmsg.QueuedRan{}.Body()) || strings.Contains(s, sysmsg.QueuedDropped{}.Body()) {
			return true
		}
		for ahead := 0; ahead <= most; ahead++ {
			if ahead > 0 && (strings.Contains(s, sysmsg.Queued{Ahead: ahead}.Body()) || strings.Contains(s, sysmsg.Queued{Ahead: ahead, Stopping: true}.Body())) ||
				strings.Contains(s, sysmsg.WaitingForAgent{Ahead: ahead}.Body()) {
				return true
			}
		}
		return false
	}
}
