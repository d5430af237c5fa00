package session_test

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/workspace"
)

// files returns the files posted in th, in order.
func (e *env) files(th channels.ThreadRef) []channels.Upload {
	var out []channels.Upload
	for _, m := range e.messages(th, channels.KindFile) {
		if m.File != nil {
			out = append(out, *m.File)
		}
	}
	return out
}

// checkPNG fails unless f is a PNG image of w×h pixels.
func checkPNG(t *testing.T, f channels.Upload, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(f.Data))
	if err != nil {
		t.Fatalf("%s is no PNG: %v", f.Name, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d", f.Name, b.Dx(), b.Dy(), w, h)
	}
	if f.ContentType != "image/png" {
		t.Errorf("%s has type %q, want image/png", f.Name, f.ContentType)
	}
}

// TestAgentImagesInThread (issue 29 point 3): the pictures of the agent's
// reply and of its tool's content reach the thread as image files, each
// once although the tool sends its content again with each update, in
// order with the text; a link to a PNG the agent wrote in its working
// directory is shown too.
func TestAgentImagesInThread(t *testing.T) {
	e := workspaceEnv(t, workspace.Dir, t.TempDir())
	th := e.rec.Thread("draw")
	e.say(th, ann, "draw")
	e.waitEnd(th)
	files := e.files(th)
	if len(files) != 2 {
		t.Fatalf("%d files posted (%v), want the chart and the screenshot once each", len(files), e.rec.OpsIn(th))
	}
	checkPNG(t, files[0], 24, 16)
	checkPNG(t, files[1], 16, 16)
	if files[0].Name == files[1].Name || !strings.HasSuffix(files[0].Name, ".png") {
		t.Errorf("file names %q and %q, want two .png names", files[0].Name, files[1].Name)
	}
	// In order: the chart after "Here is the chart:", before the tool's end.
	var order []string
	for _, op := range e.rec.OpsIn(th) {
		switch {
		case op.Op == "upload":
			order = append(order, "upload")
		case op.Op == "send" && strings.HasPrefix(op.Text, "Here"):
			order = append(order, "text")
		}
	}
	if len(order) < 2 || order[0] != "text" || order[1] != "upload" {
		t.Errorf("posts in order %v, want the text before the chart", order)
	}

	e.say(th, ann, "draw link")
	e.waitEnd(th)
	// The 32×20 chart is the one the agent wrote and linked to.
	checkPNG(t, e.upload(th, "demo-chart.png"), 32, 20)
}

// TestAgentImagesRefused: what an agent names as a picture but is not
// one the thread may see is never posted: a link to a file outside its
// working directory (however it is named), an SVG claimed to be a PNG
// (script on a web page), a link to a web address (the gateway fetches
// nothing an agent names), bad base64. The turn still ends with its text.
func TestAgentImagesRefused(t *testing.T) {
	e := workspaceEnv(t, workspace.Dir, t.TempDir())
	th := e.rec.Thread("hostile")
	e.say(th, ann, "draw hostile")
	e.waitEnd(th)
	if files := e.files(th); len(files) != 0 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name + " " + string(f.Data[:min(len(f.Data), 40)])
		}
		t.Errorf("posted %q, want nothing", names)
	}
	for _, op := range e.rec.OpsIn(th) {
		if strings.Contains(op.Text, "root:") {
			t.Errorf("the thread shows /etc/passwd: %q", op.Text)
		}
	}
	if text := e.text(th); !strings.Contains(text, "Nothing to see.") {
		t.Errorf("the thread reads %q, want the turn's text", text)
	}
}
