package discord

import (
	"testing"

	"github.com/bwmarrin/discordgo"
)

// TestAttachmentNamesShowFormatCharacters: an attachment's name reaches
// the thread and the prompt with its format characters written visibly.
func TestAttachmentNamesShowFormatCharacters(t *testing.T) {
	got := readFiles(&discordgo.Message{Attachments: []*discordgo.MessageAttachment{{Filename: "invoice\u202efdp.exe", URL: "https://cdn.example/x"}}})
	if len(got) != 1 || got[0].Name != "invoice[U+202E]fdp.exe" {
		t.Errorf("readFiles = %+v, want the name with [U+202E]", got)
	}
}
