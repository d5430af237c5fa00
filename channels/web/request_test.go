package web

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseMessageRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    messageRequest
		wantErr string
	}{
		{"plain", `{"author":"ann","text":"hi"}`, messageRequest{authorFields: authorFields{Author: "ann"}, Text: "hi"}, ""},
		{"trimmed author, text kept", `{"author":"  ann ","text":"  hi\n"}`, messageRequest{authorFields: authorFields{Author: "ann"}, Text: "  hi\n"}, ""},
		{"author id", `{"author":"Ann","authorId":"u-1","text":"hi"}`, messageRequest{authorFields: authorFields{Author: "Ann", AuthorID: "u-1"}, Text: "hi"}, ""},
		{"a file and no text", `{"author":"ann","files":[{"name":" log.txt ","type":"text/plain","data":"aGk="}]}`,
			messageRequest{authorFields: authorFields{Author: "ann"}, Files: []upload{{Name: "log.txt", Type: "text/plain", data: []byte("hi")}}}, ""},
		{"neither text nor files", `{"author":"ann","text":" "}`, messageRequest{}, `"text" is required (or "files")`},
		{"a file without a name", `{"author":"ann","files":[{"data":"aGk="}]}`, messageRequest{}, `"files[0].name" is required`},
		{"bad base64", `{"author":"ann","files":[{"name":"a","data":"!!"}]}`, messageRequest{}, `"files[0].data" is not standard base64`},
		{"too many files", `{"author":"ann","files":[` + strings.Repeat(`{"name":"a","data":""},`, 8) + `{"name":"a","data":""}]}`, messageRequest{}, `"files" has 9 files, at most 8 are allowed`},
		{"author id with space", `{"author":"Ann","authorId":"u 1","text":"hi"}`, messageRequest{}, `"authorId" must not contain spaces or control characters`},
		{"long author", `{"author":"` + strings.Repeat("a", 65) + `","text":"hi"}`, messageRequest{}, `"author" has 65 characters, at most 64 are allowed`},
		{"no author", `{"text":"hi"}`, messageRequest{Text: "hi"}, ""},
		{"null", `null`, messageRequest{}, `"text" is required (or "files")`},
		{"empty", ``, messageRequest{}, "the request body is empty, want a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMessageRequest([]byte(tc.body))
			if gotErr := errText(err); gotErr != tc.wantErr {
				t.Fatalf("error = %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(upload{}, messageRequest{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseThreadRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    string
		wantErr string
	}{
		{"no body", "", "", ""},
		{"empty object", "{}", "", ""},
		{"title", `{"title":" Build "}`, "Build", ""},
		{"control", `{"title":"a\u0007"}`, "", `"title" must not contain control characters`},
		{"number", `{"title":1}`, "", `invalid JSON: "title" must be a string, got number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseThreadRequest([]byte(tc.body))
			if gotErr := errText(err); gotErr != tc.wantErr || got.Title != tc.want {
				t.Errorf("parse = %q, %q; want %q, %q", got.Title, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// seeds are bodies every request fuzz target starts from.
var seeds = []string{
	``, `{}`, `null`, `[]`, `"x"`, `{"author":"ann","text":"hi"}`,
	`{"author":"ann","authorId":"u-1","text":"hi","optionId":"allow"}`,
	`{"author":"ann","optionId":"allow"}`, `{"title":"Build"}`, `{"author":1}`,
	`{"author":"a\u0000"}`, `{"author":"ann","text":"` + "\xff" + `"}`, `{"author":"ann"} x`,
	`{"author":"ann","files":[{"name":"log.txt","type":"text/plain","data":"aGk="}]}`,
	`{"author":"ann","files":[{"name":"","data":"@@"}]}`,
	`{"text":"hi","agent":"claude"}`, `{"text":"hi","agent":"a\u0007"}`,
}

// checkAuthor checks the invariants of accepted author fields: whatever
// they say, the author's id is the token's.
func checkAuthor(t *testing.T, a authorFields) {
	t.Helper()
	if a.Author != strings.TrimSpace(a.Author) || utf8.RuneCountInString(a.Author) > maxAuthorRunes ||
		strings.ContainsFunc(a.Author, unicode.IsControl) || !utf8.ValidString(a.Author) {
		t.Errorf("accepted author %q", a.Author)
	}
	if len(a.AuthorID) > maxIDBytes || strings.ContainsFunc(a.AuthorID, unicode.IsSpace) {
		t.Errorf("accepted authorId %q", a.AuthorID)
	}
	for _, who := range []identity{{id: "web:ann", name: "ann", fixed: true}, {id: OwnerID, name: "owner"}, {id: LocalID, name: "guest"}} {
		got, err := who.author(a)
		switch {
		case err != nil && (a.AuthorID != "" && a.AuthorID != who.id || who.fixed && a.Author != "" && a.Author != who.name):
		case err != nil:
			t.Errorf("%+v refused for %s: %v", a, who.id, err)
		case got.ID != who.id || got.Name == "" || who.fixed && got.Name != who.name:
			t.Errorf("%+v by %s's token = %+v", a, who.id, got)
		}
	}
}

// roundTrip checks that an accepted request encodes to a body that parses
// to the same request.
func roundTrip[T comparable](t *testing.T, parse func([]byte) (T, error), v T) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %+v: %v", v, err)
	}
	again, err := parse(data)
	if err != nil {
		t.Fatalf("re-parsing %s: %v", data, err)
	}
	if again != v {
		t.Errorf("round trip of %s = %+v, want %+v", data, again, v)
	}
}

func FuzzParseThreadRequest(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseThreadRequest(body)
		if err != nil {
			return
		}
		if req.Title != strings.TrimSpace(req.Title) || utf8.RuneCountInString(req.Title) > maxTitleInRunes || strings.ContainsFunc(req.Title, unicode.IsControl) {
			t.Errorf("accepted title %q", req.Title)
		}
		roundTrip(t, parseThreadRequest, req)
	})
}

func FuzzParseMessageRequest(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseMessageRequest(body)
		if err != nil {
			return
		}
		checkAuthor(t, req.authorFields)
		if (strings.TrimSpace(req.Text) == "" && len(req.Files) == 0) || len(req.Text) > maxTextBytes || !utf8.ValidString(req.Text) {
			t.Errorf("accepted text %q with %d files", req.Text, len(req.Files))
		}
		if len(req.Files) > maxUploads {
			t.Errorf("accepted %d files", len(req.Files))
		}
		if utf8.RuneCountInString(req.Agent) > 64 || strings.ContainsFunc(req.Agent, unicode.IsControl) || !utf8.ValidString(req.Agent) {
			t.Errorf("accepted agent %q", req.Agent)
		}
		for _, f := range req.Files {
			if f.Name == "" || f.Name != strings.TrimSpace(f.Name) || strings.ContainsFunc(f.Name, unicode.IsControl) || f.Data != "" {
				t.Errorf("accepted file %+v", f)
			}
		}
		if len(req.Files) == 0 {
			type plain struct {
				authorFields
				Text  string
				Agent string `json:"agent,omitempty"`
			}
			data, err := json.Marshal(plain{req.authorFields, req.Text, req.Agent})
			if err != nil {
				t.Fatal(err)
			}
			again, err := parseMessageRequest(data)
			if err != nil || again.authorFields != req.authorFields || again.Text != req.Text || again.Agent != req.Agent {
				t.Errorf("round trip of %+v = %+v, %v", req, again, err)
			}
		}
	})
}

func FuzzParseStopRequest(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseStopRequest(body)
		if err != nil {
			return
		}
		checkAuthor(t, req.authorFields)
		roundTrip(t, parseStopRequest, req)
	})
}

func FuzzParseAnswerRequest(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseAnswerRequest(body)
		if err != nil {
			return
		}
		checkAuthor(t, req.authorFields)
		if req.OptionID == "" || len(req.OptionID) > maxOptionIDBytes {
			t.Errorf("accepted optionId %q", req.OptionID)
		}
		roundTrip(t, parseAnswerRequest, req)
	})
}
