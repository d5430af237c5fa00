package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/workspace"
)

// maxAgentFile bounds a file of an agent's home that check reads.
const maxAgentFile = 1 << 20

// warnAgents warns, for the agents of agents.list that check recognises
// by their command (never by anything an agent says), about what makes
// them fail in ways the thread does not explain: codex-acp without a
// bubblewrap its own sandbox can use, and Gemini CLI in a folder it does
// not trust.
func warnAgents(cfg config.Config, w io.Writer) {
	_, probeErr := sandboxProbe()
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents.List)) {
		a := cfg.Agents.List[name]
		spec, _ := cfg.AgentSpec(name)
		switch agentKind(a.Command) {
		case kindCodex:
			switch {
			case spec.Sandbox != nil && probeErr == nil && envValue(spec.Env, "INITIAL_AGENT_MODE", "") != "read-only":
				fmt.Fprintf(w, "gateway check: warning: agents.list.%s runs codex-acp, whose own bubblewrap sandbox cannot start inside the gateway's (bubblewrap does not nest): every command Codex runs in its sandbox fails. "+
					"Start it in read-only mode (env INITIAL_AGENT_MODE: read-only), where Codex asks in the thread to run a command outside its sandbox (still inside the gateway's), or set agents.sandbox: off\n", name)
			case probeErr != nil:
				fmt.Fprintf(w, "gateway check: warning: agents.list.%s runs codex-acp, whose own sandbox needs bubblewrap, and none works on this machine (%s): every command Codex runs fails, and the thread shows no tool call for it. "+
					"Install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces\n", name, strings.TrimPrefix(probeErr.Error(), "sandbox: "))
			}
		case kindGemini:
			if a.Workspace != "" && a.Workspace != string(workspace.Shared) {
				continue // each thread's directory is made later
			}
			home := envValue(spec.Env, "HOME", os.Getenv("HOME"))
			if spec.Sandbox != nil {
				home = spec.Sandbox.Home
			}
			cwd := a.Cwd
			if cwd == "" {
				cwd = "."
			}
			if abs, err := filepath.Abs(cwd); err == nil {
				cwd = abs
			}
			if file, trusted := geminiTrusts(home, spec.Env, cwd); !trusted {
				fmt.Fprintf(w, "gateway check: warning: agents.list.%s runs Gemini CLI, which does not trust its directory %s: it drops the gateway's MCP server and refuses the yolo and autoEdit modes. "+
					"Write {%q: \"TRUST_FOLDER\"} to %s (or set env GEMINI_CLI_TRUST_WORKSPACE: \"true\")\n", name, cwd, cwd, file)
			}
		}
	}
}

type agentKindT int

const (
	kindOther agentKindT = iota
	kindCodex
	kindGemini
)

// agentKind recognises codex-acp and Gemini CLI by a word of the command:
// the npm package (for npx, with or without a version), a path into it,
// or the program's name.
func agentKind(command []string) agentKindT {
	for _, word := range command {
		w := filepath.ToSlash(word)
		base := pkgName(filepath.Base(w))
		switch {
		case base == "codex-acp" || strings.Contains(w, "@zed-industries/codex-acp") || strings.Contains(w, "@agentclientprotocol/codex-acp"):
			return kindCodex
		case base == "gemini" || strings.Contains(w, "@google/gemini-cli"):
			return kindGemini
		}
	}
	return kindOther
}

// pkgName drops an npm version (codex-acp@2.6.0) from a word.
func pkgName(s string) string {
	if i := strings.LastIndexByte(s, '@'); i > 0 {
		return s[:i]
	}
	return s
}

// envValue is key's value in env (K=V), or def.
func envValue(env []string, key, def string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return def
}

// geminiTrusts reports whether Gemini CLI, with home and env, trusts cwd
// (as Gemini CLI 0.61 decides), and the trusted-folders file it reads.
func geminiTrusts(home string, env []string, cwd string) (string, bool) {
	file := envValue(env, "GEMINI_CLI_TRUSTED_FOLDERS_PATH", filepath.Join(home, ".gemini", "trustedFolders.json"))
	switch envValue(env, "GEMINI_CLI_TRUST_WORKSPACE", "") {
	case "true":
		return file, true
	case "false":
		return file, false
	}
	var settings struct {
		Security struct {
			FolderTrust struct {
				Enabled *bool `json:"enabled"`
			} `json:"folderTrust"`
		} `json:"security"`
	}
	if readJSON(filepath.Join(home, ".gemini", "settings.json"), &settings) && settings.Security.FolderTrust.Enabled != nil && !*settings.Security.FolderTrust.Enabled {
		return file, true
	}
	var rules map[string]string
	if !readJSON(file, &rules) {
		return file, false
	}
	best, trust := -1, ""
	for path, level := range rules {
		dir := path
		if level == "TRUST_PARENT" {
			dir = filepath.Dir(path)
		}
		if (cwd == dir || strings.HasPrefix(cwd, strings.TrimSuffix(dir, "/")+"/")) && len(path) > best {
			best, trust = len(path), level
		}
	}
	return file, trust == "TRUST_FOLDER" || trust == "TRUST_PARENT"
}

// readJSON decodes the JSON file name (at most maxAgentFile bytes) into v.
func readJSON(name string, v any) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAgentFile))
	return err == nil && json.Unmarshal(b, v) == nil
}
