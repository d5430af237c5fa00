package golden

import "testing"

func TestParseAndFormat(t *testing.T) {
	in := "a comment\n-- args --\n--meta minimal\n-- want --\nline one\nline two\n"
	a := Parse(in)
	if a.Comment != "a comment\n" || a.Section("args") != "--meta minimal\n" || a.Section("want") != "line one\nline two\n" {
		t.Fatalf("parsed %+v", a)
	}
	if got := a.Format(); got != in {
		t.Errorf("Format = %q, want the input back", got)
	}
	a.Set("want", "changed")
	a.Set("warn", "no newline at the end")
	want := "a comment\n-- args --\n--meta minimal\n-- want --\nchanged\n-- warn --\nno newline at the end"
	if got := a.Format(); got != want {
		t.Errorf("Format after Set = %q, want %q", got, want)
	}
	if again := Parse(want); again.Section("want") != "changed\n" || again.Section("warn") != "no newline at the end" {
		t.Errorf("parsed back: want %q, warn %q", again.Section("want"), again.Section("warn"))
	}
	if _, ok := a.Get("missing"); ok || a.Has("missing") || !a.Has("warn") {
		t.Error("Get/Has disagree with the sections")
	}
}
