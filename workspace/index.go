package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/acpgw/gateway/channels"
)

// record is what the index keeps of one thread's workspace.
type record struct {
	Platform string `json:"platform"`
	Channel  string `json:"channel"`
	Thread   string `json:"thread"`
	Mode     Mode   `json:"mode"`
	Path     string `json:"path"`             // the directory; a worktree's top
	Base     string `json:"base,omitempty"`   // the template's fixed directory: removal stays beneath it
	Sub      string `json:"sub,omitempty"`    // worktree: the agent's cwd inside the checkout
	Repo     string `json:"repo,omitempty"`   // worktree: the main checkout
	Branch   string `json:"branch,omitempty"` // worktree
	Start    string `json:"start,omitempty"`  // worktree: the commit the branch started at
	// worktree: the repository's common git directory and the
	// worktree's own in it, as the repository says (gitDirs)
	GitCommon string    `json:"gitCommon,omitempty"`
	GitDir    string    `json:"gitDir,omitempty"`
	Created   time.Time `json:"created"`
}

func (r *record) ref() channels.ThreadRef {
	return channels.ThreadRef{Platform: r.Platform, Channel: r.Channel, Thread: r.Thread}
}

func (r *record) info() Info {
	return Info{Mode: r.Mode, Path: filepath.Join(r.Path, r.Sub), Root: r.Path, Repo: r.Repo, Branch: r.Branch, Start: r.Start, GitCommon: r.GitCommon, GitDir: r.GitDir}
}

// indexFile is the index's name inside dataDir/workspaces.
const indexFile = "index.json"

// loadIndex reads the index at path (none yet: empty).
func loadIndex(path string) (map[channels.ThreadRef]*record, error) {
	out := map[channels.ThreadRef]*record{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace index: %w", err)
	}
	var recs []*record
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("workspace index %s: %w", path, err)
	}
	for _, r := range recs {
		out[r.ref()] = r
	}
	return out, nil
}

// saveIndex writes idx to path atomically (0600, its directory 0700).
func saveIndex(path string, idx map[channels.ThreadRef]*record) error {
	recs := make([]*record, 0, len(idx))
	for _, r := range idx {
		recs = append(recs, r)
	}
	sortRecords(recs)
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("workspace index: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*.json")
	if err != nil {
		return fmt.Errorf("workspace index: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("workspace index: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("workspace index: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("workspace index: %w", err)
	}
	return nil
}
