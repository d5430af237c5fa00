package attach

import "github.com/acpgw/gateway/channels"

// MaxCarried bounds the text of a message's files a record carries
// (Carry): a record of the cluster's store must stay well under the 1 MB
// a NATS message holds by default.
const MaxCarried = 64 << 10

// notCarried is why a file Carry dropped the content of is left out of a
// prompt asked again.
const notCarried = "its content was not kept when another machine took this conversation over"

// Carry returns files as a record keeps them to ask their message again
// elsewhere: names, types, sizes and links, the text of text files up to
// MaxCarried together, and no image data. A file whose content it drops
// is marked so (its Skipped says why, for the agent; Dropped counts
// them). files is left unchanged.
func Carry(files []channels.File) []channels.File {
	if len(files) == 0 {
		return nil
	}
	out := make([]channels.File, len(files))
	total := 0
	for i, f := range files {
		switch {
		case f.Data != nil:
			f.Data, f.Skipped = nil, notCarried
		case f.Text != "" && total+len(f.Text) > MaxCarried:
			f.Text, f.Skipped = "", notCarried
		default:
			total += len(f.Text)
		}
		out[i] = f
	}
	return out
}

// Dropped counts the files of a message Carry dropped the content of.
func Dropped(files []channels.File) int {
	n := 0
	for _, f := range files {
		if f.Skipped == notCarried {
			n++
		}
	}
	return n
}
