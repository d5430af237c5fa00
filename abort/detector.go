package abort

import (
	"slices"
	"strings"
	"unicode"
)

// Detector decides whether a chat message asks to stop the agent's turn.
// Build one with New; it is immutable and safe for concurrent use.
type Detector struct {
	enabled bool
	phrases map[string]bool // normalised phrases that are stops
	names   []string        // normalised bot names, without "@", longest first
	maxIn   int             // a message of more bytes is never a stop
}

// New returns a Detector for c. botNames are the names people address the
// bot by with a plain "@name" (for example "gateway" or "@Claude Bot");
// platform mentions such as "<@123>" need no name. Phrases in c.Add and
// c.Remove, and bot names, are normalised like messages; phrases that
// normalise to nothing are ignored. The phrase set is the built-in phrases
// plus c.Add, minus c.Remove. New does no I/O and does not validate c.
func New(c Config, botNames ...string) *Detector {
	d := &Detector{enabled: c.Enabled, phrases: map[string]bool{}}
	for _, p := range builtin {
		d.phrases[Normalize(p)] = true
	}
	for _, p := range c.Add {
		if p = Normalize(p); p != "" {
			d.phrases[p] = true
		}
	}
	for _, p := range c.Remove {
		delete(d.phrases, Normalize(p))
	}
	longestName := 0
	for _, n := range botNames {
		n = strings.TrimLeft(Normalize(n), "@ ")
		if n == "" {
			continue
		}
		d.names = append(d.names, n)
		longestName = max(longestName, len(n))
	}
	// Longest first, so that "@bot two" is not cut as "@bot".
	slices.SortFunc(d.names, func(a, b string) int { return len(b) - len(a) })
	longest := 0
	for p := range d.phrases {
		longest = max(longest, len(p))
	}
	d.maxIn = maxInput(longest, longestName)
	return d
}

// maxInput is the length in bytes over which a message is taken not to be
// a stop without normalising it, which keeps ordinary messages fast and free
// of allocations. It leaves room for the longest phrase said twice, a
// platform mention or "@name" (a Slack "<@U…|name>" is under 48 bytes) and
// some decoration ("!!!", quotes, spaces). A stop padded beyond that, such
// as "stop" followed by a hundred "!", is not recognised.
func maxInput(longestPhrase, longestName int) int {
	return 2*longestPhrase + longestName + 48 + 32
}

// IsStop reports whether text, a whole chat message, asks to stop the
// agent's turn: after Normalize and after removing a leading "@name" of the
// bot, it is one of the Detector's phrases, or one single-word phrase
// repeated ("stop stop stop"). It is false for every message when the
// Detector is disabled, and for a message too long to be a decorated phrase
// (see maxInput), which it rejects without allocating. IsStop does no I/O.
//
// A stop of everything (IsStopAll) is a stop too.
func (d *Detector) IsStop(text string) bool {
	stop, _ := d.classify(text)
	return stop
}

// IsStopAll reports whether text asks to stop the running turn and drop
// the messages queued behind it as well: one of the phrases followed by
// "all" or "everything" ("stop all", "/stop all", "cancel everything"),
// normalised and addressed as IsStop allows. A plain stop ends the
// running turn only.
func (d *Detector) IsStopAll(text string) bool {
	_, all := d.classify(text)
	return all
}

// classify is IsStop and IsStopAll at once.
func (d *Detector) classify(text string) (stop, all bool) {
	if !d.enabled || len(text) > d.maxIn {
		return false, false
	}
	s := d.stripName(Normalize(text))
	if s == "" {
		return false, false
	}
	if i := strings.LastIndexByte(s, ' '); i > 0 && IsAllWord(s[i+1:]) {
		if rest := s[:i]; d.phrases[rest] || d.isRepeat(rest) {
			return true, true
		}
	}
	return d.phrases[s] || d.isRepeat(s), false
}

// IsAllWord reports whether w, said after a stop ("stop all", the /stop
// command's argument), asks to drop the queued messages too: "all" or
// "everything", in any case.
func IsAllWord(w string) bool {
	w = strings.TrimSpace(w)
	return strings.EqualFold(w, "all") || strings.EqualFold(w, "everything")
}

// stripName removes leading "@name" mentions of the bot, with the spaces and
// punctuation after them. s is normalised.
func (d *Detector) stripName(s string) string {
	for {
		rest, ok := d.cutName(s)
		if !ok {
			return s
		}
		s = trimEdges(trimAfterMention(rest))
	}
}

// cutName reports whether s starts with "@" and one of the bot's names,
// followed by the end of s or by a rune that cannot continue a name.
func (d *Detector) cutName(s string) (rest string, ok bool) {
	after, ok := strings.CutPrefix(s, "@")
	if !ok {
		return s, false
	}
	for _, n := range d.names {
		r, ok := strings.CutPrefix(after, n)
		if !ok {
			continue
		}
		if r == "" || !continuesName(r) {
			return r, true
		}
	}
	return s, false
}

// continuesName reports whether s starts with a rune that could be part of
// a longer name ("@bot" must not match "@botty").
func continuesName(s string) bool {
	for _, r := range s {
		return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_'
	}
	return false
}

// isRepeat reports whether s is one single-word phrase said two or more
// times ("stop stop stop", "wait wait").
func (d *Detector) isRepeat(s string) bool {
	first, rest, ok := strings.Cut(s, " ")
	if !ok || !d.phrases[first] {
		return false
	}
	for rest != "" {
		var w string
		w, rest, _ = strings.Cut(rest, " ")
		if w != first {
			return false
		}
	}
	return true
}
