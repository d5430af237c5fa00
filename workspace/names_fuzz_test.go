package workspace

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// safeBranch is what branchBase may return: a valid git branch name by
// construction (no "..", no leading "." or "-", no control or special
// characters, no ".lock" end).
var safeBranch = regexp.MustCompile(`^acp/[a-z0-9]+(-[a-z0-9]+)*$`)

// FuzzNames feeds the platforms' ids and thread titles (outside input)
// to the path and branch names: a thread's directory is always one
// element under its parent, never escapes the data directory, and two ids
// never share it; a branch is always a safe ref name.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"1700000000.123456", "../..", ".", "", "a/b", "x\x00y", "日本語", ".hidden", "a_b", "a/b-1"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := safeElem(a), safeElem(b)
		for _, e := range []string{ea, eb} {
			if e == "" || e == "." || e == ".." || strings.ContainsAny(e, "/\\\x00") || strings.HasPrefix(e, ".") {
				t.Fatalf("safeElem gave %q", e)
			}
		}
		if a != b && ea == eb {
			t.Fatalf("safeElem(%q) = safeElem(%q) = %q", a, b, ea)
		}
		p := expand("", "/data", channels.ThreadRef{Platform: a, Channel: b, Thread: a})
		if filepath.Dir(filepath.Dir(filepath.Dir(p))) != "/data/workspaces" {
			t.Fatalf("expand put thread %q/%q at %q", a, b, p)
		}
		if br := branchBase(a, b); !safeBranch.MatchString(br) || len(br) > len("acp/")+maxBranchName {
			t.Fatalf("branchBase(%q, %q) = %q", a, b, br)
		}
	})
}
