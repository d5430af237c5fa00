package attach_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
)

// A carried message keeps its links and small texts, loses image data and
// text past MaxCarried, and the prompt asked again says which files came
// without their content.
func TestCarry(t *testing.T) {
	big := strings.Repeat("x", attach.MaxCarried-10)
	files := []channels.File{
		{Name: "a.txt", ContentType: "text/plain", Size: 3, URL: "https://f/a.txt", Text: "abc"},
		{Name: "shot.png", ContentType: "image/png", Size: 4, URL: "https://f/shot.png", Data: []byte{1, 2, 3, 4}},
		{Name: "big.log", ContentType: "text/plain", Size: len(big), URL: "https://f/big.log", Text: big},
		{Name: "more.log", ContentType: "text/plain", Size: 20, URL: "https://f/more.log", Text: "twenty characters..."},
		{Name: "app.bin", Size: 9, URL: "https://f/app.bin", Skipped: "not a text or image file"},
	}
	got := attach.Carry(files)
	if files[1].Data == nil || files[3].Text == "" {
		t.Fatal("Carry changed its argument")
	}
	if n := attach.Dropped(got); n != 2 {
		t.Errorf("Dropped = %d, want 2 (the image, the text past the limit)", n)
	}
	if got[0].Text != "abc" || got[2].Text != big || got[1].Data != nil || got[3].Text != "" || got[4].Skipped != "not a text or image file" {
		t.Errorf("carried = %+v", got)
	}
	for i, f := range got {
		if f.URL != files[i].URL || f.Name != files[i].Name || f.Size != files[i].Size {
			t.Errorf("file %d lost its name, size or link: %+v", i, f)
		}
	}
	prompt, images := attach.Prompt("look", got, true)
	if len(images) != 0 || !strings.Contains(prompt, "(Attached file shot.png, image/png, 4 bytes, not included: its content was not kept") ||
		!strings.Contains(prompt, "Link: https://f/more.log") || !strings.Contains(prompt, "abc") {
		t.Errorf("prompt asked again:\n%s", prompt)
	}
	if attach.Carry(nil) != nil {
		t.Error("Carry(nil) is not nil")
	}
}
