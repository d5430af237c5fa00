package agent_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/agent"
)

// FuzzParseQuestion: any params either fail with an error or give a
// question that can be shown: a session, a known mode, a url in url mode,
// a bounded number of named fields of known kinds, choices where a choice
// is asked for.
func FuzzParseQuestion(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"a","title":"A"}]},"n":{"type":"number","minimum":1},"b":{"type":"boolean"},"m":{"type":"array","items":{"anyOf":[{"const":"x"}]}}},"required":["c"]}}`,
		`{"sessionId":"s","mode":"form","message":"m","requestedSchema":{"properties":{"t":{"type":"string","enum":["a","b"],"enumNames":["A"]}}}}`,
		`{"sessionId":"s","mode":"url","message":"m","url":"https://example.com","elicitationId":"e"}`,
		`{"sessionId":"s","mode":"form","requestedSchema":{"properties":{"a":{"type":"string"},"a":{"type":"string"}}}}`,
		`{"mode":"form"}`, `[]`, `null`, `{"sessionId":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		q, err := agent.ParseQuestion(params)
		if err != nil {
			if q.SessionID != "" || len(q.Fields) != 0 {
				t.Errorf("an error with a question: %+v", q)
			}
			return
		}
		if q.SessionID == "" {
			t.Error("a question without a session")
		}
		switch q.Mode {
		case "url":
			if q.URL == "" || len(q.Fields) != 0 {
				t.Errorf("url question %+v", q)
			}
		case "form":
		default:
			t.Errorf("mode %q", q.Mode)
		}
		if len(q.Fields) > 64 {
			t.Errorf("%d fields", len(q.Fields))
		}
		seen := map[string]bool{}
		for _, fd := range q.Fields {
			if seen[fd.Name] {
				t.Errorf("field %q twice", fd.Name)
			}
			seen[fd.Name] = true
			switch fd.Kind {
			case agent.FieldChoice, agent.FieldMulti:
				if len(fd.Choices) == 0 {
					t.Errorf("field %q of kind %s without choices", fd.Name, fd.Kind)
				}
			case agent.FieldText, agent.FieldNumber, agent.FieldInteger, agent.FieldBool:
				if len(fd.Choices) != 0 {
					t.Errorf("field %q of kind %s with choices", fd.Name, fd.Kind)
				}
			default:
				t.Errorf("field %q of kind %q", fd.Name, fd.Kind)
			}
		}
	})
}

// TestParseQuestionOrderAndNames: fields keep the order of the agent's
// properties object; enumNames title the enum values they pair with.
func TestParseQuestionOrderAndNames(t *testing.T) {
	q, err := agent.ParseQuestion([]byte(`{"sessionId":"s","mode":"form","message":"m","requestedSchema":{"properties":{"zeta":{"type":"boolean"},"alpha":{"type":"string","enum":["a","b"],"enumNames":["Ay"]},"mid":{"type":"string","format":"email"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range q.Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "zeta,alpha,mid" {
		t.Errorf("field order = %s, want zeta,alpha,mid", got)
	}
	if c := q.Fields[1].Choices; len(c) != 2 || c[0].Title != "Ay" || c[1].Title != "b" {
		t.Errorf("choices = %+v, want Ay and b", c)
	}
	if q.Fields[2].Format != "email" || q.Fields[2].Kind != agent.FieldText {
		t.Errorf("mid = %+v, want an email text", q.Fields[2])
	}
}
