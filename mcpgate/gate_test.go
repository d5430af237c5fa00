package mcpgate

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func openTest(t *testing.T, th Thread) *Server {
	t.Helper()
	s, err := Open(Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: t.TempDir(), MaxFileBytes: 1024, Command: "/bin/gateway"}, th)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.SetAgent(os.Getpid()) // the test is the agent
	return s
}

// TestToken: a call with a wrong or missing token is refused and reaches
// nothing; the right token works.
func TestToken(t *testing.T) {
	th := &FakeThread{}
	s := openTest(t, th)
	for _, tok := range []string{"", "wrong", s.Token()[:len(s.Token())-1], s.Token() + "0"} {
		_, refusal, err := Call(t.Context(), s.SocketPath(), tok, ToolSendMessage, "hi")
		if err != nil || refusal != "wrong token" {
			t.Errorf("token %q: refusal %q, err %v; want wrong token", tok, refusal, err)
		}
	}
	if _, msgs, _ := th.Calls(); len(msgs) != 0 {
		t.Fatalf("a call with a wrong token reached the thread: %q", msgs)
	}
	answer, refusal, err := Call(t.Context(), s.SocketPath(), s.Token(), ToolSendMessage, "hi")
	if err != nil || refusal != "" || answer != "sent the message to the thread" {
		t.Errorf("right token: %q, %q, %v", answer, refusal, err)
	}
	if _, msgs, _ := th.Calls(); !cmp.Equal(msgs, []string{"hi"}) {
		t.Errorf("messages = %q, want [hi]", msgs)
	}
}

// TestSocketFile: the socket is mode 0600 in a 0700 directory (an
// existing, looser one is tightened), the MCP server entry names it and
// the token, and Close removes it.
func TestSocketFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: dir, Root: t.TempDir(), MaxFileBytes: 1, Command: "/bin/gateway"}, &FakeThread{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != fs.ModeSocket || st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", st.Mode())
	}
	if dst, err := os.Stat(dir); err != nil || dst.Mode().Perm() != 0o700 {
		t.Errorf("directory mode = %v (%v), want 0700", dst.Mode(), err)
	}
	m := s.MCPServer()
	want := []string{EnvSocket + "=" + s.SocketPath(), EnvToken + "=" + s.Token()}
	if m.Command != "/bin/gateway" || !cmp.Equal(m.Args, []string{"mcp"}) || !cmp.Equal(m.Env, want) || len(s.Token()) != 64 {
		t.Errorf("MCPServer = %+v", m)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.SocketPath()); !os.IsNotExist(err) {
		t.Errorf("socket after Close: %v, want gone", err)
	}
}

// TestOpenErrors: a bad size limit or a missing workspace is refused.
func TestOpenErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcp")
	for _, o := range []Options{
		{Dir: dir, Root: t.TempDir(), MaxFileBytes: 0},
		{Dir: dir, Root: filepath.Join(t.TempDir(), "missing"), MaxFileBytes: 1},
		{Dir: "", Root: t.TempDir(), MaxFileBytes: 1},
	} {
		if s, err := Open(o, &FakeThread{}); err == nil {
			s.Close()
			t.Errorf("Open(%+v) succeeded", o)
		}
	}
}

// TestServeNeedsEnv: the MCP half without its socket or token says which
// variables are missing.
func TestServeNeedsEnv(t *testing.T) {
	err := Serve(t.Context(), "", "", nil, nil)
	if err == nil || !strings.Contains(err.Error(), EnvSocket) {
		t.Errorf("err = %v", err)
	}
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     request
		err      string
	}{
		{"send_file", `{"token":"t","tool":"send_file","path":"a","caption":"c"}` + "\n", request{Token: "t", Tool: ToolSendFile, Path: "a", Caption: "c"}, ""},
		{"read default", `{"token":"t","tool":"read_thread"}` + "\n", request{Token: "t", Tool: ToolReadThread, Limit: DefaultReadLimit}, ""},
		{"read limit", `{"token":"t","tool":"read_thread","limit":5}` + "\n", request{Token: "t", Tool: ToolReadThread, Limit: 5}, ""},
		{"limit too big", `{"tool":"read_thread","limit":101}` + "\n", request{}, "limit must be 1 to 100"},
		{"negative limit", `{"tool":"read_thread","limit":-1}` + "\n", request{}, "limit must be 1 to 100"},
		{"unknown tool", `{"tool":"rm"}` + "\n", request{}, `unknown tool "rm"`},
		{"unknown field", `{"tool":"send_message","text":"x","x":1}` + "\n", request{}, "unknown field"},
		{"empty path", `{"tool":"send_file"}` + "\n", request{}, "path is empty"},
		{"empty text", `{"tool":"send_message"}` + "\n", request{}, "text is empty"},
		{"trailing", `{"tool":"send_message","text":"x"} {}` + "\n", request{}, "trailing data"},
		{"unterminated", `{"tool":"send_message","text":"x"}`, request{}, "not terminated"},
		{"too long", `{"tool":"send_message","text":"` + strings.Repeat("x", maxRequestBytes) + `"}` + "\n", request{}, "longer than"},
		{"not json", "hello\n", request{}, "decode request"},
		{"ask", `{"token":"t","tool":"ask","question":"Which?","options":["a","b"]}` + "\n", request{Token: "t", Tool: ToolAsk, Question: "Which?", Options: []string{"a", "b"}}, ""},
		{"ask text", `{"tool":"ask","question":"Name?","options":[]}` + "\n", request{Tool: ToolAsk, Question: "Name?"}, ""},
		{"ask no question", `{"tool":"ask","question":"  "}` + "\n", request{}, "question is empty"},
		{"ask empty option", `{"tool":"ask","question":"q","options":["a",""]}` + "\n", request{}, "option 2 is empty"},
		{"ask twice", `{"tool":"ask","question":"q","options":["a","a"]}` + "\n", request{}, `option "a" is given twice`},
		{"ask too many", `{"tool":"ask","question":"q","options":[` + strings.Repeat(`"x",`, MaxAskOptions) + `"y"]}` + "\n", request{}, "at most 25 options"},
		{"ask long", `{"tool":"ask","question":"` + strings.Repeat("x", MaxAskChars+1) + `"}` + "\n", request{}, "question is longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeRequest(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeRequest: any input either fails or gives a valid request that
// encodes and decodes to itself.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"token":"t","tool":"send_file","path":"a","caption":"c"}` + "\n",
		`{"token":"t","tool":"read_thread","limit":5}` + "\n",
		`{"tool":"send_message","text":"x"}` + "\n",
		`{"tool":"send_message","text":"x"}{}` + "\n",
		`{"tool":"ask","question":"q","options":["a","b"]}` + "\n",
		`{"tool":"ask","question":"q","options":[]}` + "\n",
		"\n", `{}`, `{"limit":1e400}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := decodeRequest(bytes.NewReader(in))
		if err != nil {
			return
		}
		switch req.Tool {
		case ToolSendFile, ToolSendMessage, ToolReadThread:
		case ToolAsk:
			if err := checkAsk(req.Question, req.Options); err != nil || (req.Options != nil && len(req.Options) == 0) {
				t.Fatalf("decoded bad ask arguments %+v: %v", req, err)
			}
		default:
			t.Fatalf("decoded an unknown tool %q", req.Tool)
		}
		if req.Tool == ToolReadThread && (req.Limit < 1 || req.Limit > MaxReadLimit) {
			t.Fatalf("limit %d out of range", req.Limit)
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeRequest(bytes.NewReader(append(b, '\n')))
		if err != nil || !cmp.Equal(req, again) {
			t.Fatalf("round trip: %+v -> %+v, %v", req, again, err)
		}
	})
}
