package acpwire

import (
	"bytes"
	"path"
	"strings"

	"github.com/acpgw/gateway/projector"
)

// block is a decoded ACP ContentBlock.
type block struct {
	typ  string
	text string
	// thought is set when the block's metadata marks it as a thought.
	thought bool
	// img is the picture of an image block or of a resource link to an
	// image (see image).
	img projector.ImageBlock
}

// Bits of a block's thought markers.
const (
	blockSegment uint8 = 1 << iota
	blockChannel
	blockRole
	blockAnnotations
	blockMeta
)

// block decodes the content block at i, whose enclosing containers number
// depth. Its text is kept when its type is "text", or always if anyText.
// A value that is not an object gives a zero block.
func (d *decoder) block(i, depth int, anyText bool) (block, int, error) {
	if i >= len(d.data) || d.data[i] != '{' {
		end, err := d.skip(i, depth)
		return block{}, end, err
	}
	var (
		b      block
		textAt int // offset+1 of a text seen before the type said "text"
		dataAt int // offset+1 of an image's data, decoded once the type is known
		marks  uint8
	)
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return block{}, 0, err
		}
		if !ok {
			i = v
			break
		}
		k := d.key(key, kfl)
		switch string(k) {
		case "type":
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return block{}, 0, err
			}
			b.typ = d.wordOr(t)
		case "text":
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return block{}, 0, err
			}
			b.text, textAt = "", 0
			if t.kind == '"' {
				if anyText || b.typ == "text" {
					b.text = d.str(t.raw, t.fl)
				} else {
					textAt = t.at + 1
				}
			}
		case "data":
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return block{}, 0, err
			}
			dataAt = 0
			if t.kind == '"' {
				dataAt = t.at + 1
			}
		case "mimeType", "uri", "name":
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return block{}, 0, err
			}
			s := d.stringOr(t)
			switch k[0] {
			case 'm':
				b.img.MimeType = s
			case 'u':
				b.img.URI = s
			default:
				b.img.Name = s
			}
		case "segment", "channel", "role":
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return block{}, 0, err
			}
			bit := blockSegment
			switch k[0] {
			case 'c':
				bit = blockChannel
			case 'r':
				bit = blockRole
			}
			setBit(&marks, bit, d.isThoughtWord(t))
		case "annotations":
			var on bool
			if on, i, err = d.annotationsThought(v, depth+1); err != nil {
				return block{}, 0, err
			}
			setBit(&marks, blockAnnotations, on)
		case "_meta":
			var on bool
			if on, i, err = d.metaThought(v, depth+1); err != nil {
				return block{}, 0, err
			}
			setBit(&marks, blockMeta, on)
		default:
			if i, err = d.skip(v, depth+1); err != nil {
				return block{}, 0, err
			}
		}
	}
	if textAt != 0 && b.typ == "text" {
		t, _, err := d.next(textAt-1, depth+1)
		if err != nil {
			return block{}, 0, err
		}
		b.text = d.str(t.raw, t.fl)
	}
	if !anyText && b.typ != "text" {
		b.text = ""
	}
	img, err := d.image(b.typ, b.img, dataAt, depth)
	if err != nil {
		return block{}, 0, err
	}
	b.img = img
	b.thought = marks != 0
	return b, i, nil
}

// image keeps img, the picture fields of a block of type typ, when the
// block is a picture: an image block with data (at dataAt-1) or a uri,
// or a resource link whose media type or name is an image's. Else none.
func (d *decoder) image(typ string, img projector.ImageBlock, dataAt, depth int) (projector.ImageBlock, error) {
	switch typ {
	case "image":
		img.Name = ""
		if dataAt != 0 {
			t, _, err := d.next(dataAt-1, depth+1)
			if err != nil {
				return projector.ImageBlock{}, err
			}
			img.Data = d.stringOr(t)
		}
		if !img.Known() {
			return projector.ImageBlock{}, nil
		}
		return img, nil
	case "resource_link":
		if img.URI == "" || !imageLink(img) {
			return projector.ImageBlock{}, nil
		}
		return img, nil
	}
	return projector.ImageBlock{}, nil
}

// imageLink reports whether a resource link names an image: by its
// media type, or else by its uri's or name's extension.
func imageLink(img projector.ImageBlock) bool {
	if img.MimeType != "" {
		return strings.HasPrefix(img.MimeType, "image/")
	}
	for _, s := range []string{img.URI, img.Name} {
		switch strings.ToLower(path.Ext(s)) {
		case ".png", ".jpg", ".jpeg", ".gif", ".webp":
			return true
		}
	}
	return false
}

// metaThought reports whether the _meta object at i marks a chunk as a
// thought: a thought word under segment, kind, channel, role or type, or
// true under thought or thinking.
func (d *decoder) metaThought(i, depth int) (bool, int, error) {
	if i >= len(d.data) || d.data[i] != '{' {
		end, err := d.skip(i, depth)
		return false, end, err
	}
	var marks uint8
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return false, 0, err
		}
		if !ok {
			return marks != 0, v, nil
		}
		var bit uint8
		word := true
		switch string(d.key(key, kfl)) {
		case "segment":
			bit = 1 << 0
		case "kind":
			bit = 1 << 1
		case "channel":
			bit = 1 << 2
		case "role":
			bit = 1 << 3
		case "type":
			bit = 1 << 4
		case "thought":
			bit, word = 1<<5, false
		case "thinking":
			bit, word = 1<<6, false
		default:
			if i, err = d.skip(v, depth+1); err != nil {
				return false, 0, err
			}
			continue
		}
		var t token
		if t, i, err = d.next(v, depth+1); err != nil {
			return false, 0, err
		}
		if word {
			setBit(&marks, bit, d.isThoughtWord(t))
		} else {
			setBit(&marks, bit, t.kind == 't')
		}
	}
}

// annotation is one member of a content.annotations object.
type annotation struct {
	key   []byte
	match bool
}

// annotationsThought reports whether the annotations at i mark a chunk as
// a thought: a thought word as a string directly inside the annotations
// object, or annotations._meta marking it as metaThought does (for a
// duplicate key, the last value counts). A list of annotation objects
// marks the chunk when any of them does. Annotations that carry only
// audience, priority or lastModified mark nothing.
func (d *decoder) annotationsThought(i, depth int) (bool, int, error) {
	if i < len(d.data) && d.data[i] == '[' {
		return d.annotationList(i, depth)
	}
	if i >= len(d.data) || d.data[i] != '{' {
		end, err := d.skip(i, depth)
		return false, end, err
	}
	ann := d.f.ann[:0]
	defer func() {
		clear(ann)
		d.f.ann = ann[:0]
	}()
	i++
	for first := true; ; first = false {
		key, kfl, v, ok, err := d.member(i, first)
		if err != nil {
			return false, 0, err
		}
		if !ok {
			i = v
			break
		}
		if kfl != 0 {
			key = bytes.Clone(d.key(key, kfl))
		}
		var match bool
		if string(key) == "_meta" {
			if match, i, err = d.metaThought(v, depth+1); err != nil {
				return false, 0, err
			}
		} else {
			var t token
			if t, i, err = d.next(v, depth+1); err != nil {
				return false, 0, err
			}
			match = d.isThoughtWord(t)
		}
		ann = append(ann, annotation{key: key, match: match})
	}
	if len(ann) > 32 {
		last := make(map[string]bool, len(ann))
		for _, a := range ann {
			last[string(a.key)] = a.match
		}
		for _, m := range last {
			if m {
				return true, i, nil
			}
		}
		return false, i, nil
	}
outer:
	for n, a := range ann {
		if !a.match {
			continue
		}
		for _, later := range ann[n+1:] {
			if bytes.Equal(a.key, later.key) {
				continue outer
			}
		}
		return true, i, nil
	}
	return false, i, nil
}

// annotationList reports whether any annotations object in the array at i
// marks a chunk as a thought.
func (d *decoder) annotationList(i, depth int) (bool, int, error) {
	found := false
	i++
	for first := true; ; first = false {
		v, ok, err := d.elem(i, first)
		if err != nil {
			return false, 0, err
		}
		if !ok {
			return found, v, nil
		}
		if v < len(d.data) && d.data[v] == '{' {
			var on bool
			if on, i, err = d.annotationsThought(v, depth+1); err != nil {
				return false, 0, err
			}
			found = found || on
			continue
		}
		if i, err = d.skip(v, depth+1); err != nil {
			return false, 0, err
		}
	}
}

// toolContent decodes the array of tool content blocks at i.
func (d *decoder) toolContent(i, depth int) ([]projector.ToolContent, int, error) {
	out := make([]projector.ToolContent, 0)
	i++
	for first := true; ; first = false {
		v, ok, err := d.elem(i, first)
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			return out, v, nil
		}
		if v >= len(d.data) || d.data[v] != '{' {
			if i, err = d.skip(v, depth+1); err != nil {
				return nil, 0, err
			}
			continue
		}
		var (
			tc                     projector.ToolContent
			inner                  block
			path, oldText, newText string
			terminalID             string
		)
		i = v + 1
		for first := true; ; first = false {
			key, kfl, v, ok, err := d.member(i, first)
			if err != nil {
				return nil, 0, err
			}
			if !ok {
				i = v
				break
			}
			var t token
			switch string(d.key(key, kfl)) {
			case "type":
				t, i, err = d.next(v, depth+2)
				tc.Type = d.wordOr(t)
			case "content":
				inner, i, err = d.block(v, depth+2, false)
			case "path":
				t, i, err = d.next(v, depth+2)
				path = d.stringOr(t)
			case "oldText":
				t, i, err = d.next(v, depth+2)
				oldText = d.stringOr(t)
			case "newText":
				t, i, err = d.next(v, depth+2)
				newText = d.stringOr(t)
			case "terminalId":
				t, i, err = d.next(v, depth+2)
				terminalID = d.stringOr(t)
			default:
				i, err = d.skip(v, depth+2)
			}
			if err != nil {
				return nil, 0, err
			}
		}
		switch tc.Type {
		case "content":
			tc.Text, tc.Image = inner.text, inner.img
		case "diff":
			tc.Path, tc.OldText, tc.NewText = path, oldText, newText
		case "terminal":
			tc.TerminalID = terminalID
		}
		out = append(out, tc)
	}
}
