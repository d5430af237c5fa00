package projector

import (
	"encoding/json"
	"strconv"
	"strings"
)

// RawOutputText is what a tool's raw output shows: the command's output
// where it is shaped like one (Codex sends only rawOutput, with stdout,
// stderr, aggregated_output, formatted_output and exit_code; opencode an
// output), with a non-zero exit code said; other output as compact JSON.
func RawOutputText(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Formatted  *string `json:"formatted_output"`
		Aggregated *string `json:"aggregated_output"`
		Output     *string `json:"output"`
		Stdout     *string `json:"stdout"`
		Stderr     *string `json:"stderr"`
		ExitCode   *int64  `json:"exit_code"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return CompactJSON(raw)
	}
	var out string
	switch {
	case o.Formatted != nil && *o.Formatted != "":
		out = *o.Formatted
	case o.Aggregated != nil && *o.Aggregated != "":
		out = *o.Aggregated
	case o.Output != nil && *o.Output != "":
		out = *o.Output
	case o.Stdout != nil || o.Stderr != nil:
		var parts []string
		for _, p := range []*string{o.Stdout, o.Stderr} {
			if p != nil && *p != "" {
				parts = append(parts, strings.TrimRight(*p, "\n"))
			}
		}
		out = strings.Join(parts, "\n")
	case o.Formatted == nil && o.Aggregated == nil && o.Output == nil && o.ExitCode == nil:
		return CompactJSON(raw)
	}
	if o.ExitCode != nil && *o.ExitCode != 0 {
		out = strings.TrimRight(out, "\n") + "\n(exit code " + strconv.FormatInt(*o.ExitCode, 10) + ")"
		out = strings.TrimLeft(out, "\n")
	}
	return out
}
