package channeltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

// Harness connects the contract suite to one adapter under test and the
// (fake) platform behind it.
type Harness struct {
	// Adapter is the adapter under test. The suite starts and stops its Run.
	Adapter channels.Adapter
	// Thread is a thread the adapter may post in.
	Thread channels.ThreadRef
	// Inject simulates a person writing text in Thread, through the
	// platform, so that it arrives via Run's handler. The suite calls it
	// right after starting Run; the harness makes sure the message arrives
	// once Run is connected (by waiting for the connection or by queuing).
	Inject func(ctx context.Context, author channels.Author, text string) error
	// Click simulates a person clicking option optionID on prompt h, so
	// that it arrives via Run's handler as Inbound.Choice. It is required
	// when the adapter is a channels.Prompter, and ignored otherwise.
	Click func(ctx context.Context, author channels.Author, h channels.Handle, optionID string) error
	// Seen returns the platform-side text of message id: what a person
	// would see.
	Seen func(ctx context.Context, id channels.MessageID) (string, error)
	// SeenUpload returns the last file put into Thread as a person would
	// get it: its name, media type, bytes, and the text shown with it as
	// Caption. h is what Upload returned. It is required when the adapter
	// is a channels.Uploader, and ignored otherwise.
	SeenUpload func(ctx context.Context, h channels.Handle) (channels.Upload, error)

	// Answer simulates a person submitting form h with values by field
	// label (the form's fields as the platform shows them), so that it
	// arrives via Run's handler as Inbound.Form. AnswerForm does the same
	// with an action and values by field id, where the platform takes
	// those. A Former's harness sets one of them, or neither where the
	// fake cannot answer yet (the suite then checks only the question).
	Answer     func(ctx context.Context, author channels.Author, h channels.Handle, values map[string]string) error
	AnswerForm func(ctx context.Context, author channels.Author, h channels.Handle, action channels.FormAction, values map[string][]string) error
	// Reactions returns the emoji the app's own reactions on message h
	// show, in the gateway's form ("👀"). It is required when the adapter
	// is a channels.Reactor, and ignored otherwise.
	Reactions func(ctx context.Context, h channels.Handle) ([]string, error)
	// React simulates a person adding emoji to message h, so that it
	// arrives via Run's handler as Inbound.Reaction. Optional; nil skips
	// that check.
	React func(ctx context.Context, author channels.Author, h channels.Handle, emoji string) error

	// MissingID is a message id in the platform's format that names no
	// message in Thread, for the edit-of-a-missing-message check. Optional;
	// "" means "0".
	MissingID channels.MessageID
	// TypingShown reports whether a person would see a typing indicator in
	// Thread now. Optional; nil skips those checks.
	TypingShown func(ctx context.Context) (bool, error)
	// Author maps an author the suite invents to the one the platform
	// reports for them, where a test cannot choose ids (the web chat's
	// come from its tokens). Optional; nil keeps the author as it is.
	Author func(channels.Author) channels.Author
}

// author returns a as the platform reports it.
func (h Harness) author(a channels.Author) channels.Author {
	if h.Author == nil {
		return a
	}
	return h.Author(a)
}

// waitTimeout bounds every wait of the suite: for an inbound message, for
// Run to return, for goroutines to end. Tests of the suite shorten it.
var waitTimeout = 10 * time.Second

// contractCases are the subtests of RunContract, in order.
var contractCases = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"Limits", testLimits},
	{"Post", testPost},
	{"PostKinds", testPostKinds},
	{"PostLeadingSpace", testPostLeadingSpace},
	{"PostMaxChars", testPostMaxChars},
	{"Edit", testEdit},
	{"EditMissing", testEditMissing},
	{"Typing", testTyping},
	{"Prompt", testPrompt},
	{"Card", testCard},
	{"Upload", testUpload},
	{"Form", testForm},
	{"React", testReact},
	{"Inject", testInject},
	{"RunStops", testRunStops},
	{"RunDoneContext", testRunDoneContext},
	{"Capabilities", testCapabilities},
	{"PromptMany", testPromptMany},
	{"Commands", testCommands},
}

// RunContract runs the channel contract suite as subtests of t. Each subtest
// calls newHarness for a fresh adapter and platform; newHarness registers
// the platform's cleanup with t.Cleanup.
//
// The contract, beyond what package channels documents:
//   - Limits does no I/O, returns the same value each time, has no negative
//     field, and MaxMessageChars is 0 (no limit) or at least 500.
//   - Post returns a known handle in the thread it was given, and a person
//     sees the text (exactly, for plain KindText; contained, for other
//     kinds, which adapters may style). A text of exactly MaxMessageChars
//     code points, multi-byte runes and emoji included, is accepted. A
//     message never begins with the blanks the agent's text resumed with
//     (channels.TrimLead), posted or edited.
//   - An Editor replaces the text in place; editing a message that does not
//     exist fails, preferably with an error wrapping channels.ErrMessageGone.
//   - A Typer's Typing and a TypingStopper's StopTyping return nil. A
//     TypingStopper is also a Typer.
//   - A Prompter's Prompt returns a known handle, and a click comes back
//     through Run's handler as Inbound.Choice with that handle and option.
//   - A Carder with cards on shows a card's rows (Seen contains each
//     row's text), replaces them in place on an edit, and fails the edit
//     of a card that does not exist.
//   - An Uploader reports Limits.MaxUploadBytes > 0; a file it uploads
//     reaches the thread with its name and exact bytes, its media type
//     (given, or guessed from the name) and its caption.
//   - A Former's Form returns a known handle, a person sees its text, and
//     an answer comes back through Run's handler as Inbound.Form accept
//     with that handle and the values by field id.
//   - A Reactor's reactions show on the message once each, in order;
//     adding one already there and removing one not there are no errors; a person's reaction
//     on a message of a thread the app is in comes back as
//     Inbound.Reaction (where the harness can react).
//   - Text a person writes comes back through Run's handler with the text,
//     the author, the thread and a message id. Inbound messages from bots
//     (Author.Bot) are ignored by the suite.
//   - Run returns nil (not context.Canceled) soon after its context ends,
//     also when the context ended before the call, and leaves no goroutine
//     behind.
//   - A Prompter takes a choice of up to 25 options (shown as buttons or
//     a menu), and a pick comes back as Inbound.Choice.
//   - A Commander's SetCommands takes the gateway's commands.
//   - No advertised capability fails with "not supported".
//   - A Former's form, once answered, can be folded by an edit (where the
//     harness answers by id).
//
// The goroutine check looks at all goroutines of the process, so do not run
// RunContract in parallel with other tests.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			checkHarness(t, h)
			c.run(t, h)
		})
	}
}

func checkHarness(t *testing.T, h Harness) {
	t.Helper()
	switch {
	case h.Adapter == nil:
		t.Fatal("harness: Adapter is nil")
	case h.Inject == nil:
		t.Fatal("harness: Inject is nil")
	case h.Seen == nil:
		t.Fatal("harness: Seen is nil")
	}
	if _, ok := channels.As[channels.Prompter](h.Adapter); ok && h.Click == nil {
		t.Fatal("harness: the adapter is a Prompter but Click is nil")
	}
	if _, ok := channels.As[channels.Uploader](h.Adapter); ok && h.SeenUpload == nil {
		t.Fatal("harness: the adapter is an Uploader but SeenUpload is nil")
	}
	if _, ok := channels.As[channels.Reactor](h.Adapter); ok && h.Reactions == nil {
		t.Fatal("harness: the adapter is a Reactor but Reactions is nil")
	}
}

// waitCtx returns a context that ends after waitTimeout.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// runner is a running Run of an adapter under test.
type runner struct {
	inbound chan channels.Inbound
	cancel  context.CancelFunc
	done    chan error // receives Run's result
	stopped bool
}

// startRun starts a.Run and stops it when the test ends.
func startRun(t *testing.T, a channels.Adapter) *runner {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &runner{
		inbound: make(chan channels.Inbound, 64),
		cancel:  cancel,
		done:    make(chan error, 1),
	}
	go func() {
		r.done <- a.Run(ctx, func(ctx context.Context, in channels.Inbound) {
			select {
			case r.inbound <- in:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run's context and waits for Run to return nil.
func (r *runner) stop(t *testing.T) {
	t.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	// t.Context is already done during cleanup, so the guard starts afresh.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), waitTimeout)
	defer cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run after its context ended = %v, want nil", err)
		}
	case <-ctx.Done():
		t.Errorf("Run did not return within %v after its context ended", waitTimeout)
	}
}

// next returns the next inbound message not written by a bot.
func (r *runner) next(ctx context.Context, t *testing.T) channels.Inbound {
	t.Helper()
	for {
		select {
		case in := <-r.inbound:
			if in.Author.Bot {
				t.Logf("ignoring inbound message from bot %q: %q", in.Author.ID, in.Text)
				continue
			}
			return in
		case err := <-r.done:
			r.stopped = true
			t.Fatalf("Run returned %v before its context ended", err)
		case <-ctx.Done():
			t.Fatalf("no inbound message within %v", waitTimeout)
		}
	}
}

func testLimits(t *testing.T, h Harness) {
	l := h.Adapter.Limits()
	if again := h.Adapter.Limits(); again != l {
		t.Errorf("Limits changed between calls: %+v, then %+v", l, again)
	}
	fields := []struct {
		name string
		neg  bool
	}{
		{"MaxMessageChars", l.MaxMessageChars < 0},
		{"MaxLines", l.MaxLines < 0},
		{"MinEditInterval", l.MinEditInterval < 0},
		{"MinPostInterval", l.MinPostInterval < 0},
		{"TypingInterval", l.TypingInterval < 0},
	}
	for _, f := range fields {
		if f.neg {
			t.Errorf("Limits().%s is negative: %+v", f.name, l)
		}
	}
	if n := l.MaxMessageChars; n > 0 && n < 500 {
		t.Errorf("Limits().MaxMessageChars = %d, want 0 (no limit) or at least 500", n)
	}
}

// postSeen posts m, checks the handle and returns what a person sees.
func postSeen(ctx context.Context, t *testing.T, h Harness, m channels.Message) (channels.Handle, string) {
	t.Helper()
	hd, err := h.Adapter.Post(ctx, h.Thread, m)
	if err != nil {
		t.Fatalf("Post(%s, %d code points): %v", m.Kind, len([]rune(m.Text)), err)
	}
	checkHandle(t, "Post", h, hd)
	seen, err := h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after Post: %v", hd.ID, err)
	}
	return hd, seen
}

func checkHandle(t *testing.T, call string, h Harness, hd channels.Handle) {
	t.Helper()
	if !hd.Known() {
		t.Fatalf("%s returned handle %+v without a message id", call, hd)
	}
	if hd.Thread != h.Thread {
		t.Errorf("%s returned a handle in thread %v, want %v", call, hd.Thread, h.Thread)
	}
}

func testPost(t *testing.T, h Harness) {
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	const text = "Hello from the contract suite."
	_, seen := postSeen(ctx, t, h, channels.Message{Kind: channels.KindText, Text: text})
	if seen != text {
		t.Errorf("Seen after Post = %q, want %q", seen, text)
	}
}

func testPostKinds(t *testing.T, h Harness) {
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	kinds := []channels.Kind{
		channels.KindText, channels.KindTool, channels.KindStatus, channels.KindNotice,
		channels.KindPlan, channels.KindThought, channels.KindPermission,
	}
	for _, k := range kinds {
		text := fmt.Sprintf("A message of kind %s", k)
		hd, seen := postSeen(ctx, t, h, channels.Message{Kind: k, Text: text, Key: "key-" + string(k)})
		if !strings.Contains(seen, text) {
			t.Errorf("Seen(%q) of a %s message = %q, want it to contain %q", hd.ID, k, seen, text)
		}
	}
}

// testPostLeadingSpace: an agent's text that resumes after a tool call
// with " " starts a new message; the person sees it without the space,
// also once the message grows by edits.
func testPostLeadingSpace(t *testing.T, h Harness) {
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	hd, seen := postSeen(ctx, t, h, channels.Message{Kind: channels.KindText, Text: " Second message."})
	if seen != "Second message." {
		t.Errorf("Seen after Post of %q = %q, want %q", " Second message.", seen, "Second message.")
	}
	ed, ok := channels.As[channels.Editor](h.Adapter)
	if !ok {
		return
	}
	const grown = " Second message, grown."
	if err := ed.Edit(ctx, hd, channels.Message{Kind: channels.KindText, Text: grown}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	seen, err := h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after Edit: %v", hd.ID, err)
	}
	if want := grown[1:]; seen != want {
		t.Errorf("Seen after Edit to %q = %q, want %q", grown, seen, want)
	}
}

// maxText returns a text of exactly n code points mixing ASCII, a two-byte
// rune and a four-byte emoji (two UTF-16 units).
func maxText(n int) string {
	pattern := []rune{'e', 'é', '🙂'}
	var b strings.Builder
	for i := range n {
		b.WriteRune(pattern[i%len(pattern)])
	}
	return b.String()
}

func testPostMaxChars(t *testing.T, h Harness) {
	n := h.Adapter.Limits().MaxMessageChars
	if n == 0 {
		t.Skip("no message length limit")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	text := maxText(n)
	_, seen := postSeen(ctx, t, h, channels.Message{Kind: channels.KindText, Text: text})
	if seen != text {
		t.Errorf("Seen after Post of %d code points = %d code points, want the same text", n, len([]rune(seen)))
	}
}

func testEdit(t *testing.T, h Harness) {
	ed, ok := channels.As[channels.Editor](h.Adapter)
	if !ok {
		t.Skip("not an Editor")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	hd, _ := postSeen(ctx, t, h, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "Run ls · running"})
	const want = "Run ls · done"
	if err := ed.Edit(ctx, hd, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: want}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	seen, err := h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after Edit: %v", hd.ID, err)
	}
	if !strings.Contains(seen, want) || strings.Contains(seen, "running") {
		t.Errorf("Seen after Edit = %q, want the new text %q instead of the old", seen, want)
	}
}

func testCard(t *testing.T, h Harness) {
	c, ok := channels.As[channels.Carder](h.Adapter)
	if !ok || !c.Cards() {
		t.Skip("not a Carder with cards on")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	rows := []channels.Message{
		{Kind: channels.KindTool, Key: "call_1", Text: "Read a.go · running"},
		{Kind: channels.KindTool, Key: "call_2", Text: "Run ls · running"},
	}
	hd, err := c.Card(ctx, h.Thread, channels.Handle{}, rows)
	if err != nil {
		t.Fatalf("Card: %v", err)
	}
	checkHandle(t, "Card", h, hd)
	seen, err := h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after Card: %v", hd.ID, err)
	}
	for _, r := range rows {
		if !strings.Contains(seen, r.Text) {
			t.Errorf("Seen after Card = %q, want it to show the row %q", seen, r.Text)
		}
	}
	rows[0].Text = "Read a.go · done"
	rows = append(rows, channels.Message{Kind: channels.KindTool, Key: "call_3", Text: "Edit b.go · pending"})
	again, err := c.Card(ctx, h.Thread, hd, rows)
	if err != nil {
		t.Fatalf("Card (edit): %v", err)
	}
	if again != hd {
		t.Errorf("Card (edit) = %+v, want the card's handle %+v", again, hd)
	}
	seen, err = h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after the edit: %v", hd.ID, err)
	}
	if !strings.Contains(seen, "Read a.go · done") || strings.Contains(seen, "a.go · running") || !strings.Contains(seen, "Edit b.go · pending") {
		t.Errorf("Seen after the edit = %q, want the new rows in place of the old", seen)
	}
	id := h.MissingID
	if id == "" {
		id = "0"
	}
	if _, err := c.Card(ctx, h.Thread, channels.Handle{Thread: h.Thread, ID: id}, rows); err == nil {
		t.Errorf("Card edit of missing message %q = nil, want an error", id)
	}
}

func testEditMissing(t *testing.T, h Harness) {
	ed, ok := channels.As[channels.Editor](h.Adapter)
	if !ok {
		t.Skip("not an Editor")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	id := h.MissingID
	if id == "" {
		id = "0"
	}
	err := ed.Edit(ctx, channels.Handle{Thread: h.Thread, ID: id}, channels.Message{Kind: channels.KindText, Text: "edited"})
	switch {
	case err == nil:
		t.Errorf("Edit of missing message %q = nil, want an error (preferably wrapping channels.ErrMessageGone)", id)
	case unsupported(err):
		t.Errorf("Edit of missing message %q = %v, want an error saying the message is gone", id, err)
	case !errors.Is(err, channels.ErrMessageGone):
		t.Logf("Edit of missing message %q = %v; accepted, but wrapping channels.ErrMessageGone lets dispatch fall back to a new post", id, err)
	}
}

func testTyping(t *testing.T, h Harness) {
	ty, isTyper := channels.As[channels.Typer](h.Adapter)
	st, isStopper := channels.As[channels.TypingStopper](h.Adapter)
	if !isTyper {
		if isStopper {
			t.Fatal("adapter is a TypingStopper but not a Typer")
		}
		t.Skip("not a Typer")
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	for i, what := range []string{"start", "refresh"} {
		if err := ty.Typing(ctx, h.Thread); err != nil {
			t.Fatalf("Typing call %d (%s): %v", i+1, what, err)
		}
	}
	checkTypingShown(ctx, t, h, true)
	if !isStopper {
		return
	}
	if err := st.StopTyping(ctx, h.Thread); err != nil {
		t.Fatalf("StopTyping: %v", err)
	}
	checkTypingShown(ctx, t, h, false)
}

func checkTypingShown(ctx context.Context, t *testing.T, h Harness, want bool) {
	t.Helper()
	if h.TypingShown == nil {
		return
	}
	got, err := h.TypingShown(ctx)
	if err != nil {
		t.Fatalf("TypingShown: %v", err)
	}
	if got != want {
		t.Errorf("TypingShown = %v, want %v", got, want)
	}
}

func testPrompt(t *testing.T, h Harness) {
	pr, ok := channels.As[channels.Prompter](h.Adapter)
	if !ok {
		t.Skip("not a Prompter")
	}
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	const question = "Allow the agent to run ls?"
	hd, err := pr.Prompt(ctx, h.Thread, channels.Choice{
		Text: question,
		Options: []channels.Option{
			{ID: "allow", Label: "Allow", Style: "primary"},
			{ID: "reject", Label: "Reject", Style: "danger"},
		},
	})
	if err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	checkHandle(t, "Prompt", h, hd)
	seen, err := h.Seen(ctx, hd.ID)
	if err != nil {
		t.Fatalf("Seen(%q) after Prompt: %v", hd.ID, err)
	}
	if !strings.Contains(seen, question) {
		t.Errorf("Seen after Prompt = %q, want it to contain %q", seen, question)
	}

	author := h.author(channels.Author{ID: "u-clicker", Name: "Clicker"})
	if err := h.Click(ctx, author, hd, "allow"); err != nil {
		t.Fatalf("Click: %v", err)
	}
	in := run.next(ctx, t)
	if in.Choice == nil {
		t.Fatalf("inbound after Click = %+v, want a Choice", in)
	}
	if got := *in.Choice; got.Prompt.ID != hd.ID || got.OptionID != "allow" {
		t.Errorf("inbound Choice = %+v, want prompt %q and option %q", got, hd.ID, "allow")
	}
	if in.Thread != h.Thread {
		t.Errorf("inbound Thread after Click = %v, want %v", in.Thread, h.Thread)
	}
	if in.Author.ID != author.ID {
		t.Errorf("inbound Author.ID after Click = %q, want %q", in.Author.ID, author.ID)
	}
}

// pngPixel is a 1×1 PNG: binary data with bytes that are not UTF-8.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

func testUpload(t *testing.T, h Harness) {
	up, ok := channels.As[channels.Uploader](h.Adapter)
	if !ok {
		t.Skip("not an Uploader")
	}
	if n := h.Adapter.Limits().MaxUploadBytes; n <= 0 {
		t.Fatalf("Limits().MaxUploadBytes = %d for an Uploader, want its limit", n)
	}
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	files := []struct {
		f        channels.Upload
		wantType string
	}{
		{channels.Upload{Name: "notes.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("line one\nline two — é 🙂\n"), Caption: "The notes you asked for."}, "text/plain"},
		{channels.Upload{Name: "pixel.png", Data: pngPixel}, "image/png"},
	}
	for _, c := range files {
		hd, err := up.Upload(ctx, h.Thread, c.f)
		if err != nil {
			t.Fatalf("Upload(%s): %v", c.f.Name, err)
		}
		if hd.Thread != h.Thread {
			t.Errorf("Upload(%s) returned a handle in thread %v, want %v", c.f.Name, hd.Thread, h.Thread)
		}
		got, err := h.SeenUpload(ctx, hd)
		if err != nil {
			t.Fatalf("SeenUpload after Upload(%s): %v", c.f.Name, err)
		}
		if got.Name != c.f.Name {
			t.Errorf("uploaded file's name = %q, want %q", got.Name, c.f.Name)
		}
		if string(got.Data) != string(c.f.Data) {
			t.Errorf("uploaded %s has %d bytes %q, want %d bytes %q", c.f.Name, len(got.Data), got.Data, len(c.f.Data), c.f.Data)
		}
		if !strings.HasPrefix(got.ContentType, c.wantType) {
			t.Errorf("uploaded %s has media type %q, want %q", c.f.Name, got.ContentType, c.wantType)
		}
		if !strings.Contains(got.Caption, c.f.Caption) {
			t.Errorf("uploaded %s is shown with %q, want its caption %q", c.f.Name, got.Caption, c.f.Caption)
		}
	}
}

func testInject(t *testing.T, h Harness) {
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	author := h.author(channels.Author{ID: "u-writer", Name: "Writer"})
	const text = "please list the files"
	if err := h.Inject(ctx, author, text); err != nil {
		t.Fatalf("Inject: %v", err)
	}
	in := run.next(ctx, t)
	if in.Text != text {
		t.Errorf("inbound Text = %q, want %q", in.Text, text)
	}
	if in.Author.ID != author.ID || in.Author.Name != author.Name || in.Author.Bot != author.Bot {
		t.Errorf("inbound Author = %+v, want %+v", in.Author, author)
	}
	if in.Thread != h.Thread {
		t.Errorf("inbound Thread = %v, want %v", in.Thread, h.Thread)
	}
	if in.ID == "" {
		t.Errorf("inbound ID is empty, want the platform's message id")
	}
	if in.Choice != nil {
		t.Errorf("inbound Choice = %+v, want nil for a written message", in.Choice)
	}
}

func testRunStops(t *testing.T, h Harness) {
	before := goroutines()
	ctx := waitCtx(t)
	run := startRun(t, h.Adapter)
	// A message round trip shows that Run is connected before it is stopped.
	if err := h.Inject(ctx, h.author(channels.Author{ID: "u-writer", Name: "Writer"}), "are you there?"); err != nil {
		t.Fatalf("Inject: %v", err)
	}
	run.next(ctx, t)
	run.stop(t)
	checkNoNewGoroutines(ctx, t, before)
}

func testRunDoneContext(t *testing.T, h Harness) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	done := make(chan error, 1)
	go func() { done <- h.Adapter.Run(ctx, func(context.Context, channels.Inbound) {}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run with an ended context = %v, want nil", err)
		}
	case <-waitCtx(t).Done():
		t.Fatalf("Run with an ended context did not return within %v", waitTimeout)
	}
}

// unsupported reports whether err says that the call is not supported.
func unsupported(err error) bool {
	if errors.Is(err, errors.ErrUnsupported) {
		return true
	}
	s := strings.ToLower(err.Error())
	return containsAny(s, []string{"not supported", "unsupported", "not implemented"})
}

func testCapabilities(t *testing.T, h Harness) {
	ctx := waitCtx(t)
	startRun(t, h.Adapter)
	var caps []string
	check := func(capability string, err error) {
		t.Helper()
		caps = append(caps, capability)
		switch {
		case err == nil:
		case unsupported(err):
			t.Errorf("adapter claims %s, but the call fails: %v", capability, err)
		default:
			t.Errorf("%s: %v", capability, err)
		}
	}
	hd, err := h.Adapter.Post(ctx, h.Thread, channels.Message{Kind: channels.KindText, Text: "capability check"})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	if ed, ok := channels.As[channels.Editor](h.Adapter); ok {
		check("Editor", ed.Edit(ctx, hd, channels.Message{Kind: channels.KindText, Text: "capability check, edited"}))
	}
	if ty, ok := channels.As[channels.Typer](h.Adapter); ok {
		check("Typer", ty.Typing(ctx, h.Thread))
	}
	if st, ok := channels.As[channels.TypingStopper](h.Adapter); ok {
		if _, ok := channels.As[channels.Typer](h.Adapter); !ok {
			t.Errorf("adapter is a TypingStopper but not a Typer")
		}
		check("TypingStopper", st.StopTyping(ctx, h.Thread))
	}
	if pr, ok := channels.As[channels.Prompter](h.Adapter); ok {
		_, err := pr.Prompt(ctx, h.Thread, channels.Choice{Text: "capability check", Options: []channels.Option{{ID: "ok", Label: "OK"}}})
		check("Prompter", err)
	}
	if up, ok := channels.As[channels.Uploader](h.Adapter); ok {
		_, err := up.Upload(ctx, h.Thread, channels.Upload{Name: "check.txt", Data: []byte("capability check\n")})
		check("Uploader", err)
	}
	if fm, ok := channels.As[channels.Former](h.Adapter); ok {
		_, err := fm.Form(ctx, h.Thread, channels.Form{Text: "capability check", Fields: []channels.Field{{ID: "x", Label: "X", Kind: channels.FieldText}}})
		check("Former", err)
	}
	if re, ok := channels.As[channels.Reactor](h.Adapter); ok {
		check("Reactor", re.React(ctx, hd, "✅"))
	}
	t.Logf("capabilities: %q", caps)
}
