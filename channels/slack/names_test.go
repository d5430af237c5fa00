package slack

import "testing"

// TestFileNamesShowFormatCharacters: a shared file's name reaches the
// thread and the prompt with its format characters written visibly.
func TestFileNamesShowFormatCharacters(t *testing.T) {
	a := &Adapter{}
	got, _ := a.files([]file{{Name: "invoice\u202efdp.exe", Size: 3, Mode: "external"}})
	if len(got) != 1 || got[0].Name != "invoice[U+202E]fdp.exe" {
		t.Errorf("files = %+v, want the name with [U+202E]", got)
	}
}
