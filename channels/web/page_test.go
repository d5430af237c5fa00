package web

import (
	"bytes"
	"testing"
)

// TestPageAssembled checks that the page as built holds each of its
// source files once, in its one inline <style> or <script>, and no
// include line.
func TestPageAssembled(t *testing.T) {
	if m := includeLine.Find(pageSource); m != nil {
		t.Errorf("the page still has the include line %q", m)
	}
	styles, scripts := inlineStyle.FindAllSubmatch(pageSource, -1), inlineScript.FindAllSubmatch(pageSource, -1)
	if len(styles) != 1 || len(scripts) != 1 {
		t.Fatalf("the page has %d <style> and %d <script>, want one each", len(styles), len(scripts))
	}
	for _, tc := range []struct {
		file string
		in   []byte
	}{
		{"page.css", styles[0][1]},
		{"page-core.js", scripts[0][1]},
		{"page-widgets.js", scripts[0][1]},
	} {
		src, err := pageFiles.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(tc.in, src) != 1 {
			t.Errorf("%s is not in the page's inline element once", tc.file)
		}
	}
}
