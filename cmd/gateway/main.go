// Command gateway lets people drive coding agents (ACP) from chat threads.
//
// Subcommands:
//
//	gateway [run] [flags]         start the gateway
//	gateway check [flags]         validate and print the configuration
//	gateway replay [flags] FILE   preview a recorded ACP session as chat operations
//	gateway demo-agent [flags]    serve the scripted demo ACP agent on stdio
//	gateway mcp                   the gateway's MCP server for one session (agents start it)
//	gateway edge [flags]          serve the platform connections to a cluster's workers
//	gateway worker [flags]        run agents and threads for a cluster's edges
//	gateway nats --store DIR      run an embedded NATS JetStream node
//	gateway help                  show usage
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/demoagent"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/mcpgate"
	"github.com/acpgw/gateway/replay"
	"github.com/acpgw/gateway/sandbox/egress"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		// The agent's parent inside its sandbox forwards the signals
		// itself; it must not be stopped by them first.
		os.Exit(egress.RunInside(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if err := harden(); err != nil {
		fmt.Fprintln(os.Stderr, "gateway: warning: other processes of this user may read the gateway's memory and environment:", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if code := exitStatus(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// exitStatus is the process's exit status for run's error; it writes the
// error to stderr when there is something to say.
func exitStatus(err error, stderr io.Writer) int {
	var ex exitCode
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0 // asked for help, and got it
	case errors.As(err, &ex):
		return int(ex)
	default:
		fmt.Fprintln(stderr, "gateway:", err)
		return 2
	}
}

// exitCode is an error that asks main to exit with that status and say
// nothing more.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

const usage = `usage: gateway <command> [flags]

commands:
  run      start the gateway (default): every configured channel, or the
           local web chat with the demo agent when none is
  check    validate the configuration and print it (secrets masked)
  replay   run a recorded ACP session (NDJSON) through the projector and
           dispatch into a recording channel; print the chat operations
  demo-agent
           serve the scripted demo ACP agent on stdin/stdout (the
           embedded default agent; send it "help" for its scenarios)
  mcp      serve one session's MCP tools (send_file, send_message,
           read_thread) on stdin/stdout; agents start it, told its socket
           and token in their environment
  edge     hold the configured channels' platform connections and serve
           them to a cluster's workers over NATS (cluster.nats.url)
  worker   run agents and the threads it owns for a cluster's edges
           (cluster.nats.url); SIGTERM drains (cluster.drainTimeout)
  nats     run an embedded NATS JetStream node (--store DIR) for trying a
           cluster on one machine
  help     show this help (also -h, --help)
`

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "run"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelp(args[0])) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "replay":
		return runReplay(ctx, args, stdin, stdout, stderr)
	case "demo-agent":
		return runDemoAgent(ctx, args, stdin, stdout, stderr)
	case "mcp":
		return runMCP(ctx, args, stdin, stdout)
	case "sandbox-exec": // hidden: the agent's parent inside its sandbox (main runs it first)
		if code := egress.RunInside(ctx, args, stdin, stdout, stderr); code != 0 {
			return exitCode(code)
		}
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "run":
		return runGateway(ctx, args, stdout, stderr)
	case "check":
		return runCheck(args, stdout, stderr)
	case "nats":
		return runNATS(ctx, args, stdout, stderr)
	case "edge":
		return replicasHint(runEdge(ctx, args, stdout, stderr))
	case "worker":
		return replicasHint(runWorker(ctx, args, stdout, stderr))
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// multi collects repeated --set flags.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func runReplay(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sets multi
	cfgPath := fs.String("config", "", "YAML configuration `file`")
	fs.Var(&sets, "set", "override a setting: `key=value` (repeatable), e.g. acp.stream.metaMode=verbose")
	presets, names := replayPresets()
	limits := fs.String("limits", "web", "channel preset: "+names)
	noEdit := fs.Bool("no-edit", false, "remove editing from the preset")
	summary := fs.Bool("summary", false, "add a last line with counts")
	interval := fs.Duration("frame-interval", replay.DefaultFrameInterval, "virtual time between two frames")
	session := fs.String("session", "", "replay this session `id` from the cluster's event log stream instead of a file")
	natsURL := fs.String("nats", "", "the NATS `url` of --session (default cluster.nats.url)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gateway replay [--config FILE] [--set key=value]... [--limits discord|slack|web|none] [--no-edit] [--summary] STREAM.ndjson | --session ID [--nats URL]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *session == "" && *natsURL != "" {
		return errors.New("replay: --nats goes with --session ID")
	}
	if *session != "" && fs.NArg() != 0 {
		fs.Usage()
		return errors.New("replay: --session ID replaces the STREAM.ndjson argument; give one or the other")
	}
	if *session == "" && fs.NArg() != 1 {
		fs.Usage()
		return errors.New("replay: want exactly one STREAM.ndjson (use - for standard input)")
	}
	preset, ok := presets[*limits]
	if !ok {
		return fmt.Errorf("replay: --limits must be one of %s, got %q", names, *limits)
	}
	if *noEdit {
		preset.Edit = false
	}
	cfg, err := config.LoadOptions{Path: *cfgPath, Sets: sets, Platforms: platforms()}.Load()
	if err != nil {
		return err
	}
	in := stdin
	if *session != "" {
		if in, err = clusterEvents(ctx, cfg.Cluster, *natsURL, *session); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	} else if name := fs.Arg(0); name != "-" {
		if _, err := os.Stat(name); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		// An event log may be rotated into segments; the reader joins
		// them and drops a torn last line.
		f, err := eventlog.OpenReader(name)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		defer f.Close()
		in = f
	}
	_, err = replay.Run(ctx, in, stdout, replay.Options{
		Stream:        cfg.ACP.Stream,
		Typing:        cfg.Typing,
		Preset:        preset,
		FrameInterval: *interval,
		Summary:       *summary,
		Warn:          stderr,
	})
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// replayPresets are the --limits profiles of gateway replay: each
// platform's limits as its adapter package exports them, and "none" (no
// limit, no edit, no typing); names lists them for the usage.
func replayPresets() (map[string]replay.Preset, string) {
	return map[string]replay.Preset{
		discord.Platform: replay.PresetFor(discord.Limits()),
		slack.Platform:   replay.PresetFor(slack.Limits()),
		web.Platform:     replay.PresetFor(web.Limits()),
		"none":           {},
	}, strings.Join([]string{discord.Platform, slack.Platform, web.Platform, "none"}, ", ")
}

// runDemoAgent serves the demo agent on stdio; see demoagent.Main.
// runMCP serves the MCP half of mcpgate on stdio. It reads no
// configuration and holds no platform token: the socket and its token come
// from the environment the agent was told to give it.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("mcp takes no arguments, got %q", args)
	}
	return mcpgate.Serve(ctx, os.Getenv(mcpgate.EnvSocket), os.Getenv(mcpgate.EnvToken), io.NopCloser(stdin), nopWriteCloser{stdout})
}

// nopWriteCloser is a writer whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func runDemoAgent(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if code := demoagent.Main(ctx, args, stdin, stdout, stderr); code != 0 {
		return exitCode(code)
	}
	return nil
}
