package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/acpgw/gateway/channels"
)

// safeElem turns an id into one path element: letters, digits, ".", "_"
// and "-" stay, anything else becomes "_", and when that changed the id
// (or it starts with a "."), a short hash of the id is added, so two ids
// never share an element.
func safeElem(id string) string {
	var b strings.Builder
	changed := id == "" || strings.HasPrefix(id, ".")
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	s := b.String()
	if len(s) > 64 {
		s, changed = s[:64], true
	}
	if changed {
		sum := sha256.Sum256([]byte(id))
		s = strings.TrimLeft(s, ".") + "-" + hex.EncodeToString(sum[:4])
	}
	return s
}

// expand fills tmpl for the thread t; a relative result is taken under
// dataDir.
func expand(tmpl, dataDir string, t channels.ThreadRef) string {
	if tmpl == "" {
		tmpl = DefaultTemplate
	}
	p := strings.NewReplacer(
		"{platform}", safeElem(t.Platform),
		"{channel}", safeElem(t.Channel),
		"{thread}", safeElem(t.Thread),
	).Replace(tmpl)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dataDir, p)
	}
	return filepath.Clean(p)
}

// maxBranchName is the longest short name of a branch, before "acp/" and
// a "-N" suffix.
const maxBranchName = 40

// branchBase returns acp/NAME for a thread's short name: lower-case ASCII
// letters and digits, other runs as one "-", at most maxBranchName long;
// fallback (the thread's id) when name has none of them. The result is a
// valid git branch name.
func branchBase(name, fallback string) string {
	s := refPart(name)
	if s == "" {
		s = refPart(fallback)
	}
	if s == "" {
		s = "thread"
	}
	return "acp/" + s
}

func refPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sep := dash && b.Len() > 0
			if sep && b.Len()+2 > maxBranchName || b.Len()+1 > maxBranchName {
				break
			}
			if sep {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}
