package demoagent

import (
	"bytes"
	"encoding/base64"
	stdimage "image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"

	acp "github.com/coder/acp-go-sdk"
)

// chartName is the file "draw link" writes in the working directory.
const chartName = "demo-chart.png"

// chart returns a small PNG: w×h bars in the colour c.
func chart(w, h int, c color.RGBA) []byte {
	img := stdimage.NewRGBA(stdimage.Rect(0, 0, w, h))
	for x := range w {
		top := h - (x*7%h + 1)
		for y := range h {
			if y >= top {
				img.Set(x, y, c)
			} else {
				img.Set(x, y, color.White)
			}
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // to memory: never fails
	return b.Bytes()
}

// runDraw shows pictures the way agents do (ACP image content blocks
// and resource links), to see what the gateway puts into the thread:
//   - draw: an image block in the reply, then a tool whose content holds
//     the same image (sent again with each update) and a second one;
//   - draw link: writes demoChart in the working directory and links to it;
//   - draw hostile: what must never be shown: links to files outside the
//     working directory (/etc/passwd named like an image, a PNG it writes
//     beside the directory, a symlink inside to that PNG), an SVG claimed
//     to be a PNG, a link to a web address, bad base64.
func runDraw(t *turn, arg string) (acp.StopReason, error) {
	first := base64.StdEncoding.EncodeToString(chart(24, 16, color.RGBA{R: 40, G: 120, B: 220, A: 255}))
	second := base64.StdEncoding.EncodeToString(chart(16, 16, color.RGBA{R: 220, G: 80, B: 40, A: 255}))
	switch arg {
	case "link":
		path := filepath.Join(t.cwd, chartName)
		if err := os.WriteFile(path, chart(32, 20, color.RGBA{G: 160, A: 255}), 0o644); err != nil {
			return acp.StopReasonEndTurn, t.say("I could not write " + path + ": " + err.Error())
		}
		return acp.StopReasonEndTurn, t.script(
			"I drew the chart into "+chartName+":",
			chunk(map[string]any{"type": "resource_link", "uri": "file://" + path, "name": chartName, "mimeType": "image/png"}),
			" That is all.",
		)
	case "hostile":
		svg := base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`))
		// A real PNG beside the working directory, and a symlink to it
		// inside: neither may be shown.
		outside := filepath.Join(filepath.Dir(t.cwd), "demo-outside.png")
		inside := filepath.Join(t.cwd, "demo-escape.png")
		_ = os.WriteFile(outside, chart(8, 8, color.RGBA{R: 255, A: 255}), 0o644)
		_ = os.Remove(inside)
		_ = os.Symlink(outside, inside)
		return acp.StopReasonEndTurn, t.script(
			"Pictures that are not:",
			chunk(map[string]any{"type": "resource_link", "uri": "file:///etc/passwd", "name": "passwd.png", "mimeType": "image/png"}),
			chunk(map[string]any{"type": "resource_link", "uri": "file://" + outside, "mimeType": "image/png"}),
			chunk(map[string]any{"type": "resource_link", "uri": "file://" + inside, "mimeType": "image/png"}),
			chunk(map[string]any{"type": "image", "mimeType": "image/png", "data": svg}),
			chunk(map[string]any{"type": "resource_link", "uri": "http://127.0.0.1:1/chart.png", "name": "chart.png"}),
			chunk(map[string]any{"type": "image", "mimeType": "image/png", "data": "%%% not base64 %%%"}),
			" Nothing to see.",
		)
	}
	shot := map[string]any{"type": "content", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": first}}
	return acp.StopReasonEndTurn, t.script(
		"Here is the chart:",
		chunk(map[string]any{"type": "image", "mimeType": "image/png", "data": first}),
		map[string]any{"sessionUpdate": "tool_call", "toolCallId": "draw_1", "title": "Take a screenshot", "kind": "other", "status": "in_progress", "content": []any{shot}},
		map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "draw_1", "status": "completed", "content": []any{shot,
			map[string]any{"type": "content", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": second}}}},
		" And the screenshot.",
	)
}

// chunk is a raw agent_message_chunk of the content block c.
func chunk(c map[string]any) map[string]any {
	return map[string]any{"sessionUpdate": "agent_message_chunk", "content": c}
}
