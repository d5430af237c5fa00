package demoagent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// errCrashed is returned by the crash scenario after it called agent.crash.
var errCrashed = errors.New("crashed")

// turn is one running prompt. Scenarios send through it.
type turn struct {
	a    *agent
	id   acp.SessionId
	ctx  context.Context // ends on session/cancel, a superseding prompt, or when Run stops
	life context.Context // ends only when Run stops (for ignore-cancel)
	seq  int             // the turn's number in its session, for tool call ids
	cwd  string          // the session's working directory

	reply  strings.Builder // the agent's full reply, for the history
	title  string          // a session title set by this turn
	images []image         // the images of the prompt
	mcp    []acp.McpServer // the session's MCP servers
}

// send writes one session/update for the turn's session. It blocks while
// the client is not reading and fails once ctx ends.
func (t *turn) send(ctx context.Context, u acp.SessionUpdate) error {
	if err := t.a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: t.id, Update: u}); err != nil {
		return fmt.Errorf("send session/update: %w", err)
	}
	return nil
}

// update sends u unless the turn was cancelled.
func (t *turn) update(u acp.SessionUpdate) error { return t.send(t.ctx, u) }

// say sends text as one agent_message_chunk and adds it to the reply.
func (t *turn) say(text string) error { return t.sayCtx(t.ctx, text) }

func (t *turn) sayCtx(ctx context.Context, text string) error {
	if err := t.send(ctx, acp.UpdateAgentMessageText(text)); err != nil {
		return err
	}
	t.reply.WriteString(text)
	return nil
}

// stream says each chunk, pausing gap between chunks.
func (t *turn) stream(chunks []string, gap time.Duration) error {
	for i, c := range chunks {
		if i > 0 {
			if err := t.pause(gap); err != nil {
				return err
			}
		}
		if err := t.say(c); err != nil {
			return err
		}
	}
	return nil
}

// pause waits for d or until the turn is cancelled.
func (t *turn) pause(d time.Duration) error { return sleep(t.ctx, d) }

// sleep waits for d or until ctx ends. It uses the time package so that a
// testing/synctest bubble fakes it.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// toolID returns the id of the turn's k-th tool call.
func (t *turn) toolID(k int) acp.ToolCallId {
	return acp.ToolCallId(fmt.Sprintf("call_%d_%d", t.seq, k))
}

// parseCommand splits prompt text into the scenario name (its first word,
// lower-cased, without a leading "/") and the argument (the rest, leading
// white space removed, otherwise exact).
func parseCommand(text string) (name, arg string) {
	s := strings.TrimLeftFunc(text, unicode.IsSpace)
	word := s
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		word, arg = s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
	}
	return strings.ToLower(strings.TrimPrefix(word, "/")), arg
}

// parseCount parses an optional count argument: empty means def; anything
// else must be an integer in [1, max].
func parseCount(arg string, def, max int) (int, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return def, nil
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > max {
		return 0, fmt.Errorf("want a whole number from 1 to %d, got %q", max, arg)
	}
	return n, nil
}

// splitWords cuts text into about n chunks at word boundaries; the chunks
// concatenate to text.
func splitWords(text string, n int) []string {
	var words []string
	for rest := text; rest != ""; {
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			words = append(words, rest)
			break
		}
		words = append(words, rest[:i+1])
		rest = rest[i+1:]
	}
	per := max(1, (len(words)+n-1)/n)
	var out []string
	for i := 0; i < len(words); i += per {
		out = append(out, strings.Join(words[i:min(i+per, len(words))], ""))
	}
	return out
}

// splitSizes cuts text into chunks of lo to hi bytes, never inside a UTF-8
// sequence, with sizes from a fixed seed so every run sends the same chunks.
func splitSizes(text string, lo, hi int) []string {
	r := rand.New(rand.NewPCG(7, 11))
	var out []string
	for text != "" {
		n := min(lo+r.IntN(hi-lo+1), len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}
