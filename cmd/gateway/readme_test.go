package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the replay sample in README.md from the real output")

// The README's replay sample is the real output of the command it shows:
// its first lines, "...", and its last lines (or all of it, with no
// "..."). go test ./cmd/gateway -run TestREADMEReplaySample -update
// rewrites it.
func TestREADMEReplaySample(t *testing.T) {
	t.Chdir("../..") // the command runs from the repository's root
	const path = "README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const (
		command = "```sh\ngo run ./cmd/gateway replay "
		open    = "```\n\n```\n"
		closing = "\n```\n"
	)
	i := strings.Index(readme, command)
	if i < 0 {
		t.Fatalf("README.md has no %q block", command)
	}
	i += len("```sh\ngo run ./cmd/gateway ")
	n := strings.Index(readme[i:], "\n")
	args := strings.Fields(readme[i : i+n])
	start := i + n + 1
	if !strings.HasPrefix(readme[start:], open) {
		t.Fatalf("the replay command in README.md is not followed by its output block")
	}
	start += len(open)
	end := start + strings.Index(readme[start:], closing)
	sample := strings.Split(readme[start:end], "\n")

	out, errOut, err := runCLI(t, "", args...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errOut)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")

	if *update {
		keep := got
		if len(got) > 9 {
			keep = append(append(append([]string{}, got[:6]...), "..."), got[len(got)-2:]...)
		}
		readme = readme[:start] + strings.Join(keep, "\n") + readme[end:]
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	head, tail := sample, []string(nil)
	for j, l := range sample {
		if l == "..." {
			head, tail = sample[:j], sample[j+1:]
			break
		}
	}
	ok := len(head)+len(tail) <= len(got) && slicesEqual(head, got[:len(head)]) && slicesEqual(tail, got[len(got)-len(tail):])
	if tail == nil && len(head) == len(sample) { // no "...": all of it
		ok = slicesEqual(sample, got)
	}
	if !ok {
		t.Errorf("README.md's replay sample is not what `gateway %s` prints (go test ./cmd/gateway -run TestREADMEReplaySample -update rewrites it)\nREADME:\n%s\nreal output:\n%s",
			strings.Join(args, " "), strings.Join(sample, "\n"), out)
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
