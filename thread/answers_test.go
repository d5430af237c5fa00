package thread

import (
	"testing"

	"github.com/acpgw/gateway/agent"
)

// FuzzAnswerContent: whatever a person sends as a form's values, the
// answer is refused with an error or fits the question: only its fields,
// each of its kind, a choice among its choices, required fields present.
func FuzzAnswerContent(f *testing.F) {
	one, five := 1.0, 5.0
	q := agent.Question{Mode: "form", Fields: []agent.Field{
		{Name: "name", Title: "Name", Kind: agent.FieldText, Required: true, Min: &one, Max: &five},
		{Name: "n", Kind: agent.FieldInteger, Min: &one, Max: &five},
		{Name: "x", Kind: agent.FieldNumber},
		{Name: "ok", Kind: agent.FieldBool},
		{Name: "c", Kind: agent.FieldChoice, Choices: []agent.Choice{{Value: "a", Title: "A"}, {Value: "b", Title: "B"}}},
		{Name: "m", Kind: agent.FieldMulti, Max: &one, Choices: []agent.Choice{{Value: "a", Title: "A"}, {Value: "b", Title: "B"}}},
	}}
	f.Add("Ann", "3", "2.5", "true", "a", "b", "zzz")
	f.Add("", "3.5", "NaN", "maybe", "z", "a,b", "")
	f.Fuzz(func(t *testing.T, name, n, x, ok, c, m, other string) {
		values := map[string][]string{"name": {name}, "n": {n}, "x": {x}, "ok": {ok}, "c": {c}, "m": {m, other}, "other": {other}}
		content, qa, err := AnswerContent(q, values)
		if err != nil {
			if content != nil || qa != nil {
				t.Errorf("an error with content %v", content)
			}
			return
		}
		if _, ok := content["name"].(string); !ok {
			t.Errorf("required name missing or not a string: %v", content)
		}
		for k, v := range content {
			switch k {
			case "name":
			case "n", "x":
				if _, ok := v.(float64); !ok {
					t.Errorf("%s = %#v, want a number", k, v)
				}
			case "ok":
				if _, ok := v.(bool); !ok {
					t.Errorf("ok = %#v, want a bool", v)
				}
			case "c":
				if v != "a" && v != "b" {
					t.Errorf("c = %#v, want a or b", v)
				}
			case "m":
				l, ok := v.([]string)
				if !ok || len(l) > 1 || (len(l) == 1 && l[0] != "a" && l[0] != "b") {
					t.Errorf("m = %#v, want at most one of a, b", v)
				}
			default:
				t.Errorf("content has %q, no field of the question", k)
			}
		}
		if len(qa) != len(content) {
			t.Errorf("%d answer lines for %d values", len(qa), len(content))
		}
	})
}
