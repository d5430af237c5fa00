package projector

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func imageChunk(b ImageBlock) *Update {
	return &Update{Tag: TagAgentMessageChunk, RawTag: "agent_message_chunk", ContentType: "image", Image: b}
}

// TestImagesOfATurn: each picture once, at most maxTurnImages a turn
// (the next turn may show them again); links only to local files, by
// their file's name; bad base64 and web links show nothing.
func TestImagesOfATurn(t *testing.T) {
	p := New(DefaultSettings())
	var out []Output
	out = p.BeginTurn(out)
	for i := range maxTurnImages + 5 {
		data := base64.StdEncoding.EncodeToString([]byte{byte(i), 1, 2})
		out = p.Apply(imageChunk(ImageBlock{MimeType: "image/png", Data: data}), out)
		out = p.Apply(imageChunk(ImageBlock{MimeType: "image/png", Data: data}), out) // again
	}
	out = p.Apply(imageChunk(ImageBlock{MimeType: "image/png", Data: "%%%"}), out)
	out = p.Apply(&Update{Tag: TagAgentMessageChunk, ContentType: "resource_link", Image: ImageBlock{URI: "https://example.test/a.png"}}, out)
	var images []Image
	for _, o := range out {
		if img, ok := o.(Image); ok {
			images = append(images, img)
		}
	}
	if len(images) != maxTurnImages {
		t.Fatalf("%d images, want %d", len(images), maxTurnImages)
	}
	for i, img := range images {
		if !bytes.Equal(img.Data, []byte{byte(i), 1, 2}) || img.Path != "" {
			t.Errorf("image %d = %+v", i, img)
		}
	}
	if images[0].Name != "image-1.png" || images[9].Name != "image-10.png" {
		t.Errorf("names %q … %q", images[0].Name, images[9].Name)
	}

	out = p.EndTurn("end_turn", "", nil)
	out = p.BeginTurn(out)
	out = p.Apply(imageChunk(ImageBlock{MimeType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte{0, 1, 2})}), out)
	out = p.Apply(&Update{Tag: TagAgentMessageChunk, ContentType: "resource_link", Image: ImageBlock{URI: "file:///w/out/../chart.png", Name: "the chart.png"}}, out)
	out = p.Apply(&Update{Tag: TagAgentMessageChunk, ContentType: "resource_link", Image: ImageBlock{URI: "file://elsewhere/w/x.png"}}, out)
	images = images[:0]
	for _, o := range out {
		if img, ok := o.(Image); ok {
			images = append(images, img)
		}
	}
	if len(images) != 2 || images[0].Data == nil || images[1].Path != "/w/chart.png" || images[1].Name != "the chart.png" {
		t.Errorf("next turn: %+v, want the first picture again and the local link", images)
	}
}
