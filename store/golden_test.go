package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the SQL dump of the current schema in testdata")

// The dumps in testdata hold, as SQL, a database file a version of the
// store wrote for goldenRows: schema-v<N>-wire<W>.sql by the code of
// schema version N whose JSON columns were of wire version W (never
// regenerated once a newer one exists; wire0 is the code before records
// had wire types). -update rewrites the current version's.
var currentDump = fmt.Sprintf("schema-v%d-wire%d.sql", len(migrations), WireVersion)

var (
	gThread  = channels.ThreadRef{Platform: "discord", Channel: "c/1", Thread: "t1"}
	gThread2 = channels.ThreadRef{Platform: "slack", Channel: "C2", Thread: "1700000000.000100"}
	gGone    = channels.ThreadRef{Platform: "discord", Channel: "c/1", Thread: "gone"}
	gAt      = time.UnixMilli(1_700_000_000_123).UTC()
)

func gTime(ms int64) time.Time { return gAt.Add(time.Duration(ms) * time.Millisecond) }

// goldenSet is every kind of row, as the store reads it back.
type goldenSet struct {
	bindings []Binding
	prompts  []Prompt
	turns    []Turn
	running  []RunningTurn
	seen     []Seen
	choices  map[string]string
	hold     BudgetHold
	open     []OpenMessage
	entries  []Entry
}

func goldenRows() goldenSet {
	at := gTime
	b1 := Binding{Thread: gThread, Agent: "claude", SessionID: "sess-1", Cwd: "/work/a", Title: "Fix the build", Created: at(0), Updated: at(5)}
	b2 := Binding{Thread: gThread2, Agent: "codex", SessionID: "sess-2", Created: at(1), Updated: at(1)}
	opts := []PromptOption{{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "deny", Name: "Deny", Kind: "reject_once"}}
	prompt := TurnPrompt{
		ID: "m9", Author: channels.Author{ID: "u1", Name: "Ann", Roles: []string{"dev", "ops"}},
		Text: "Fix <it> & push", Space: "g1", Time: at(20),
		Files: []channels.File{{Name: "a.txt", ContentType: "text/plain", Size: 3, URL: "https://x/a.txt", Text: "abc"},
			{Name: "p.png", ContentType: "image/png", Size: 2, Data: []byte{0x89, 0x50}}, {Name: "big.bin", Skipped: "too big"}},
	}
	return goldenSet{
		bindings: []Binding{b1, b2},
		prompts: []Prompt{
			{ID: "p1", Thread: gThread, SessionID: "sess-1", RequestID: "7", ToolCallID: "c1", Title: "Edit main.go", Kind: "edit",
				Options: opts, MessageID: "m1", Status: PromptPending, CreatedAt: at(10), ExpiresAt: at(60_000)},
			{ID: "p2", Thread: gThread2, SessionID: "sess-2", RequestID: "8", Title: "Run ls", Kind: "execute",
				Options: opts, Status: PromptAnswered, Chosen: "allow", ChosenBy: "u1", CreatedAt: at(11), ResolvedAt: at(12)},
		},
		turns: []Turn{
			{Thread: gThread, SessionID: "sess-1", Seq: 1, StopReason: "end_turn", Started: at(20), Ended: at(30),
				Used: 1200, Size: 200000, UsedKnown: true, SizeKnown: true, Cost: 0.25, Currency: "USD", CostKnown: true, PromptChars: 15, ReplyChars: 40},
			{Thread: gThread, SessionID: "sess-1", Seq: 2, Error: "agent exited", Started: at(40), Ended: at(50), PromptChars: 3},
		},
		running: []RunningTurn{
			{Thread: gThread, SessionID: "sess-1", Started: at(20), Prompt: prompt, Attempts: 1},
			{Thread: gThread2, SessionID: "sess-2", Started: at(21)},
		},
		seen:    []Seen{{Binding: b1, MessageID: "m9", At: at(20)}},
		choices: map[string]string{"model": "opus", "mode": "code"},
		hold:    BudgetHold{Thread: gThread, Budget: "channel", Reached: at(30)},
		open: []OpenMessage{
			{Key: "k1", ID: "m11", Lines: []OpenLine{{Key: "c1", Text: "⏳ ls"}}},
			{Key: "k2", ID: "m12", Card: true, Lines: []OpenLine{{Key: "c2", Text: "a"}, {Key: "c3", Text: "b"}}},
		},
		entries: []Entry{
			{Seq: 0, Time: at(20), Updated: at(20), Body: Message{Role: RoleUser, Text: "Fix <it> & push"}},
			{Seq: 1, Time: at(21), Updated: at(22), Body: Thought{Text: "Hmm", Length: 9}},
			{Seq: 2, Time: at(22), Updated: at(23), Body: ToolCall{ID: "c1", Title: "Edit", Kind: "edit", Status: projector.StatusCompleted,
				Input: json.RawMessage(`{"path":"a.go"}`), Output: json.RawMessage(`{"ok":true}`),
				Content:   []projector.ToolContent{{Type: "diff", Path: "a.go", OldText: "a", NewText: "b"}, {Type: "terminal", TerminalID: "t1"}},
				Locations: []projector.Location{{Path: "a.go", Line: 3}}}},
			{Seq: 3, Time: at(23), Updated: at(24), Body: PermissionEntry{RequestID: "7", ToolCallID: "c1", Title: "Edit", Options: opts,
				Chosen: "allow", Asked: at(23), Answered: at(24)}},
			{Seq: 4, Time: at(24), Updated: at(24), Body: Plan{Entries: []projector.PlanEntry{{Content: "a", Priority: "high", Status: "pending"}}}},
			{Seq: 5, Time: at(25), Updated: at(25), Body: Meta{Modes: []Mode{{ID: "ask", Name: "Ask", Description: "asks"}}, CurrentMode: "ask",
				Models: []Model{{ID: "opus", Name: "Opus"}}, CurrentModel: "opus",
				Commands: []projector.Command{{Name: "init", Description: "set up"}}, Config: []projector.ConfigOption{{ID: "effort", Name: "Effort", Value: "high"}}}},
			{Seq: 6, Time: at(26), Updated: at(26), Body: ModeChange{Previous: "ask", New: "code"}},
			{Seq: 7, Time: at(27), Updated: at(28), Body: QuestionEntry{RequestID: "9", Message: "Which color?", Mode: "form", Fields: []string{"color"},
				Action: "accept", Content: json.RawMessage(`{"color":"green"}`), Asked: at(27), Answered: at(28)}},
			{Seq: 8, Time: at(29), Updated: at(29), Body: Message{Role: RoleAssistant, Text: "Done.", Length: 12}},
		},
	}
}

// writeRows writes goldenRows through s, as the gateway would.
func writeRows(t *testing.T, ctx context.Context, s *Store) {
	t.Helper()
	g := goldenRows()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range g.bindings {
		must(s.PutBinding(ctx, b))
	}
	must(s.PutBinding(ctx, Binding{Thread: gGone, Agent: "claude", SessionID: "sess-gone", Created: gAt, Updated: gAt}))
	must(s.DeleteBinding(ctx, gGone))
	for _, p := range g.prompts {
		p2 := p
		p2.Status, p2.Chosen, p2.ChosenBy, p2.ResolvedAt, p2.MessageID = PromptPending, "", "", time.Time{}, ""
		must(s.AddPrompt(ctx, p2))
		if p.MessageID != "" {
			must(s.SetPromptMessage(ctx, p.ID, p.MessageID))
		}
		if p.Status != PromptPending {
			if _, err := s.ResolvePrompt(ctx, p.ID, p.Status, p.Chosen, p.ChosenBy, p.ResolvedAt); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tr := range g.turns {
		must(s.AddTurn(ctx, tr))
	}
	for _, r := range g.running {
		must(s.MarkTurnRunning(ctx, r))
	}
	must(s.MarkSeen(ctx, gThread, "m9", g.seen[0].At))
	for k, v := range g.choices {
		must(s.SetChoice(ctx, gThread, k, v))
	}
	must(s.PutBudgetHold(ctx, g.hold))
	must(s.SetOpenMessages(ctx, gThread, g.open))
	must(s.SaveEntries(ctx, "sess-1", g.entries))
}

// checkRows reads back every kind of row through s.
func checkRows(t *testing.T, ctx context.Context, s *Store) {
	t.Helper()
	g := goldenRows()
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	bs, err := s.Bindings(ctx)
	check("Bindings", bs, g.bindings, err)
	for _, want := range g.prompts {
		p, _, err := s.Prompt(ctx, want.ID)
		check("Prompt "+want.ID, p, want, err)
	}
	ps, err := s.PendingPrompts(ctx)
	check("PendingPrompts", ps, g.prompts[:1], err)
	ts, err := s.Turns(ctx, "sess-1")
	check("Turns", ts, g.turns, err)
	sp, err := s.ChannelSpend(ctx, gThread.Platform, gThread.Channel, time.Time{})
	check("ChannelSpend", sp, Spend{Turns: 2, Cost: 0.25, CostKnown: true}, err)
	rs, err := s.RunningTurns(ctx)
	check("RunningTurns", rs, g.running, err)
	seen, err := s.SeenSince(ctx, time.Time{})
	check("SeenSince", seen, g.seen, err)
	cs, err := s.Choices(ctx, gThread)
	check("Choices", cs, g.choices, err)
	h, _, err := s.BudgetHoldOf(ctx, gThread)
	check("BudgetHoldOf", h, g.hold, err)
	om, err := s.OpenMessages(ctx, gThread)
	check("OpenMessages", om, g.open, err)
	es, err := s.Entries(ctx, "sess-1")
	check("Entries", es, g.entries, err)
	gone, err := s.SessionGone(ctx, "sess-gone")
	check("SessionGone", gone, true, err)
}

// sqlDump writes db's schema and rows as SQL that builds the same file
// again: user_version, each CREATE as sqlite_schema keeps it, then an
// INSERT per row, tables by name and rows in order.
func sqlDump(ctx context.Context, db *sql.DB) (string, error) {
	var b strings.Builder
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "PRAGMA user_version = %d;\n", v)
	rows, err := db.QueryContext(ctx, `SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type DESC, name`)
	if err != nil {
		return "", err
	}
	var tables []string
	for rows.Next() {
		var typ, name, q string
		if err := rows.Scan(&typ, &name, &q); err != nil {
			return "", err
		}
		if typ == "table" {
			tables = append(tables, name)
		}
		b.WriteString(q + ";\n")
	}
	if err := rows.Close(); err != nil {
		return "", err
	}
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			return "", err
		}
		cols, _ := rows.Columns()
		var inserts []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return "", err
			}
			lits := make([]string, len(vals))
			for i, v := range vals {
				lits[i] = sqlLiteral(v)
			}
			inserts = append(inserts, fmt.Sprintf("INSERT INTO %q VALUES (%s);\n", table, strings.Join(lits, ", ")))
		}
		if err := rows.Close(); err != nil {
			return "", err
		}
		slices.Sort(inserts)
		b.WriteString(strings.Join(inserts, ""))
	}
	return b.String(), nil
}

func sqlLiteral(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("X'%X'", v)
	}
	panic(fmt.Sprintf("sqlLiteral(%T)", v))
}

// fromDump builds a database file at path from a dump.
func fromDump(t *testing.T, path, dump string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), dump); err != nil {
		t.Fatalf("build a database from the dump: %v", err)
	}
}

// deletedMS is the volatile column of a dump: when a session went.
var deletedMS = regexp.MustCompile(`(INSERT INTO "sessions_gone" VALUES \('[^']*', )\d+\)`)

// TestSQLiteGoldenWrite writes goldenRows and compares the file, as SQL,
// with the current schema's dump (-update rewrites it).
func TestSQLiteGoldenWrite(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	writeRows(t, ctx, s)
	got, err := sqlDump(ctx, s.db)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", currentDump)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blank := func(s string) string { return deletedMS.ReplaceAllString(s, "${1}0)") }
	if diff := cmp.Diff(blank(string(want)), blank(got)); diff != "" {
		t.Errorf("the file differs from %s (-want +got); a change of the schema or of a JSON column needs a migration or a new version:\n%s", path, diff)
	}
}

// TestSQLiteGoldenRead opens a file written by each schema version in
// testdata (migrating it) and reads every kind of row.
func TestSQLiteGoldenRead(t *testing.T) {
	dumps, err := filepath.Glob(filepath.Join("testdata", "schema-v*.sql"))
	if err != nil || len(dumps) == 0 {
		t.Fatalf("no dumps in testdata: %v", err)
	}
	for _, d := range dumps {
		t.Run(filepath.Base(d), func(t *testing.T) {
			data, err := os.ReadFile(d)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "gateway.db")
			fromDump(t, path, string(data))
			s, err := Open(t.Context(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := pragma(t, s.db, "user_version"); got != fmt.Sprint(len(migrations)) {
				t.Errorf("user_version = %s after Open, want %d", got, len(migrations))
			}
			checkRows(t, t.Context(), s)
		})
	}
}
