package tooldisplay

import (
	"regexp"
	"strings"
)

// redacted replaces a secret.
const redacted = "•••"

// value matches one shell word: quoted strings and other characters up to
// white space outside quotes ("a b"c, 'x'y, abc). A quote without its
// closing quote counts as an ordinary character. The word does not start
// with "-", so a flag that takes no value does not swallow the next flag.
const value = `(?:"[^"]*"|'[^']*'|[^\s-])(?:"[^"]*"|'[^']*'|\S)*`

// redactions are the secret-looking patterns Redact hides, in the order they
// are applied. Patterns that name the secret keep the name (group 1) and
// replace only the value; token shapes are replaced whole. All are RE2
// expressions, so matching time is linear in the input.
//
// hint is a literal every match contains (in lower case for patterns that
// ignore case): a pattern whose hint is absent is not run, which keeps
// Redact cheap on the common line that holds no secret.
var redactions = []struct {
	re   *regexp.Regexp
	repl string
	hint string
}{
	// Long command-line flags: --token X, --password=X, --github-token X,
	// --api-key X, --client-secret X. Short flags (mysql -pX) are too
	// ambiguous to guess at.
	{regexp.MustCompile(`(?i)(--[a-z0-9-]*(?:token|password|passwd|secret|api-key|apikey)(?:=|\s+))` + value), "${1}" + redacted, "--"},
	// HTTP headers: Authorization: Bearer X (or Basic, token, Digest), and
	// API key headers.
	{regexp.MustCompile(`(?i)((?:proxy-)?authorization:\s*(?:(?:bearer|basic|token|digest)\s+)?)[^\s'"]+`), "${1}" + redacted, "authorization"},
	{regexp.MustCompile(`(?i)((?:x-api-key|api-key|x-auth-token|x-goog-api-key):\s*)[^\s'"]+`), "${1}" + redacted, ":"},
	// Environment assignments: GITHUB_TOKEN=X, X_API_KEY=X, AWS_SECRET_ACCESS_KEY=X,
	// PASSWORD=X, DB_PASSWORD="X". The keyword ends the name or is followed
	// by "_", so MAX_TOKENS=100 stays.
	{regexp.MustCompile(`\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)(?:_[A-Z0-9_]*)?=)` + value), "${1}" + redacted, "="},
	// URL query parameters: ?access_token=X, &api_key=X, &password=X, &sig=X.
	{regexp.MustCompile(`(?i)([?&](?:[a-z0-9_]*token|[a-z0-9_]*key|password|secret|sig|signature)=)[^&#\s'"]+`), "${1}" + redacted, "="},
	// Passwords in URLs: scheme://user:password@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@`), "${1}" + redacted + "@", "://"},

	// Well-known token shapes.
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), redacted, "sk-"},                                   // OpenAI, Anthropic
	{regexp.MustCompile(`\b[sr]k_live_[A-Za-z0-9]{16,}`), redacted, "k_live_"},                         // Stripe
	{regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`), redacted, "_"},                  // GitHub
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), redacted, "github_pat_"},                    // GitHub fine-grained
	{regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), redacted, "glpat-"},                             // GitLab
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), redacted, "xox"},                           // Slack bot, user
	{regexp.MustCompile(`\bxapp-[A-Za-z0-9-]{10,}`), redacted, "xapp-"},                                // Slack app-level
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`), redacted, "IA"},                              // AWS access key id
	{regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{35}`), redacted, "AIza"},                                  // Google API key
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), redacted, "eyJ"}, // JWT
}

// Redact replaces secret-looking values in s with "•••": the values of
// long flags such as --token and --password, Authorization and API key
// headers, *_TOKEN=, *_SECRET=, *_API_KEY= and PASSWORD= assignments,
// token-like URL query parameters, passwords in URLs (user:password@), and
// well-known token shapes (sk-…, ghp_…, github_pat_…, glpat-…, xoxb-…,
// xoxp-…, xapp-…, AKIA…, AIza…, eyJ… JWTs). Names are kept, so
// "GITHUB_TOKEN=abc" becomes "GITHUB_TOKEN=•••". It is a display aid that
// catches the common cases, not a guarantee.
//
// Redact is idempotent: Redact(Redact(s)) == Redact(s). One pass is not:
// a replacement can complete a match for a pattern applied before it (the
// query token in "&TOKEN=--x" becomes "•••", which the assignment pattern
// then takes as TOKEN='s value, quote and all; "ghp_…_TOKEN=x" gains a
// word boundary before "_TOKEN"), so passes repeat until nothing changes.
// Every changing pass replaces a value that was not "•••", so this ends
// after a few passes; maxRedactPasses only guards against a case no test
// has found.
func Redact(s string) string {
	for range maxRedactPasses {
		next := redactOnce(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// maxRedactPasses bounds Redact's passes; real inputs need one or two.
const maxRedactPasses = 8

// redactOnce applies each pattern once, in order.
func redactOnce(s string) string {
	lower := strings.ToLower(s)
	for _, r := range redactions {
		if !strings.Contains(s, r.hint) && !strings.Contains(lower, r.hint) {
			continue
		}
		s = r.re.ReplaceAllString(s, r.repl)
		lower = strings.ToLower(s)
	}
	return s
}
