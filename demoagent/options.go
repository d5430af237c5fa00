package demoagent

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables read by [ParseFlags] when the matching flag is absent.
const (
	// EnvStateDir is the fallback for --state-dir.
	EnvStateDir = "DEMO_AGENT_STATE_DIR"
	// EnvAuthEnv is the fallback for --auth-env.
	EnvAuthEnv = "DEMO_AGENT_AUTH_ENV"
)

// AuthMethodID is the id of the only authentication method the agent offers
// when [Options.AuthEnv] is set.
const AuthMethodID = "env-token"

// Options configure [Run]. The zero value is ready to use.
type Options struct {
	// StateDir is the directory that holds one JSON file per session so
	// that another process can load it. Empty means [DefaultStateDir].
	StateDir string
	// AuthEnv, when set, names an environment variable that gates the
	// agent: initialize advertises the "env-token" method, and session/new
	// and session/load fail with "authentication required" until an
	// authenticate call finds the variable non-empty in the agent's own
	// environment. Empty means no authentication.
	AuthEnv string
	// NoLoad makes the agent advertise neither loadSession nor
	// session/resume, like agents that cannot resume sessions.
	NoLoad bool
	// NoResume makes the agent advertise loadSession without
	// session/resume, like agents that resume only by replaying history.
	NoResume bool
	// NoImages makes the agent advertise no image prompts, like agents
	// that take text only; a prompt with an image is then an error.
	NoImages bool
	// LegacyModes makes the agent answer without config options, with its
	// modes only (session/set_mode), like agents from before config
	// options; session/set_config_option is then a method it lacks.
	LegacyModes bool
	// LikeGemini makes the agent behave as Gemini CLI 0.61 does over ACP
	// (it implies LegacyModes): its models only in the unstable "models"
	// of the session/new and session/load results, changed with
	// session/set_model; session/set_mode confirmed by a text chunk
	// "[MODE_UPDATE] <id>" instead of a current_mode_update; a third mode,
	// yolo, that it refuses with -32603 and Gemini's own message.
	LikeGemini bool
	// LoginMessage, when set, makes session/new and session/load fail
	// with -32000 and this message, with no authentication method
	// offered, as Auggie does until one logs in from a terminal.
	LoginMessage string
	// Logger receives diagnostics, never protocol frames. Nil discards.
	Logger *slog.Logger
	// Getenv looks up environment variables for authenticate. Nil means
	// os.Getenv; tests inject a map.
	Getenv func(string) string
}

// DefaultStateDir is the state directory used when [Options.StateDir] is
// empty: gateway-demo-agent under the system's temporary directory.
func DefaultStateDir() string {
	return filepath.Join(os.TempDir(), "gateway-demo-agent")
}

// ParseFlags parses the flags of the demo-agent subcommand (args excludes
// the subcommand itself) and fills in the environment fallbacks:
//
//	--state-dir DIR   where session files live; env DEMO_AGENT_STATE_DIR;
//	                  default DefaultStateDir()
//	--auth-env NAME   require authenticate, which succeeds when $NAME is
//	                  non-empty; env DEMO_AGENT_AUTH_ENV; default none
//	--no-load         do not advertise session/load nor session/resume
//	--no-resume       do not advertise session/resume (session/load only)
//	--legacy-modes    no config options: modes only (session/set_mode)
//	--like-gemini     models and modes as Gemini CLI gives them
//	--login-message TEXT  refuse every session with -32000 and TEXT
//
// A flag wins over its environment variable. ParseFlags reads the
// environment and has no other side effects; it prints nothing. For -h the
// error wraps flag.ErrHelp and its text is the usage.
func ParseFlags(args []string) (Options, error) {
	return parseFlags(args, os.Getenv)
}

func parseFlags(args []string, getenv func(string) string) (Options, error) {
	o := Options{StateDir: getenv(EnvStateDir), AuthEnv: getenv(EnvAuthEnv)}
	var usage bytes.Buffer
	fs := flag.NewFlagSet("demo-agent", flag.ContinueOnError)
	fs.SetOutput(&usage)
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir,
		"directory for session files, one JSON file per session (env "+EnvStateDir+"; default "+DefaultStateDir()+")")
	fs.StringVar(&o.AuthEnv, "auth-env", o.AuthEnv,
		"require authenticate with method "+AuthMethodID+", which succeeds when this environment variable is non-empty (env "+EnvAuthEnv+")")
	fs.BoolVar(&o.NoLoad, "no-load", false, "do not advertise session/load nor session/resume (an agent that cannot resume sessions)")
	fs.BoolVar(&o.NoResume, "no-resume", false, "do not advertise session/resume (an agent that resumes by replaying history with session/load)")
	fs.BoolVar(&o.NoImages, "no-images", false, "do not advertise image prompts (an agent that takes text only)")
	fs.BoolVar(&o.LegacyModes, "legacy-modes", false, "answer without config options, with modes only (an agent from before config options)")
	fs.BoolVar(&o.LikeGemini, "like-gemini", false, "models in session/new's unstable models and session/set_model, modes confirmed by a text chunk, yolo refused (as Gemini CLI)")
	fs.StringVar(&o.LoginMessage, "login-message", "", "refuse session/new and session/load with -32000 and this message, offering no method (as Auggie before a login)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage.Reset()
			fmt.Fprintln(&usage, "usage: gateway demo-agent [--state-dir DIR] [--auth-env NAME] [--no-load] [--no-images] [--legacy-modes] [--like-gemini] [--login-message TEXT]")
			fs.PrintDefaults()
			return Options{}, &usageError{err: err, usage: strings.TrimSpace(usage.String())}
		}
		return Options{}, fmt.Errorf("demo-agent flags: %w", err)
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("demo-agent flags: unexpected argument %q", fs.Arg(0))
	}
	if o.AuthEnv != "" && strings.ContainsAny(o.AuthEnv, "= \t\r\n\x00") {
		return Options{}, fmt.Errorf("demo-agent flags: --auth-env: %q is not an environment variable name", o.AuthEnv)
	}
	if o.LikeGemini {
		o.LegacyModes = true
	}
	return o, nil
}

// usageError carries the usage text for -h while still matching flag.ErrHelp.
type usageError struct {
	err   error
	usage string
}

func (e *usageError) Error() string { return e.usage }
func (e *usageError) Unwrap() error { return e.err }
