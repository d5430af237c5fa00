package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/replay"
	"github.com/google/go-cmp/cmp"
)

// Each --limits preset of gateway replay is what its platform's adapter
// reports (an adapter built as run builds it), so that a preview shows
// what the platform would; "none" has no limit, edit or typing.
func TestReplayPresetsAreTheAdapters(t *testing.T) {
	d, err := discord.New(discord.Options{Token: "test-token"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := slack.New(slack.Options{AppToken: "xapp-test", BotToken: "xoxb-test"})
	if err != nil {
		t.Fatal(err)
	}
	adapters := map[string]channels.Adapter{
		discord.Platform: d,
		slack.Platform:   s,
		web.Platform:     web.New(web.Options{}),
	}
	presets, names := replayPresets()
	if got, want := strings.Split(names, ", "), []string{"discord", "slack", "web", "none"}; !slices.Equal(got, want) {
		t.Errorf("names = %v, want %v", got, want)
	}
	for p, a := range adapters {
		preset, ok := presets[p]
		if !ok {
			t.Errorf("no preset for %s", p)
			continue
		}
		if diff := cmp.Diff(a.Limits(), preset.Limits); diff != "" {
			t.Errorf("%s preset's limits differ from the adapter's (-adapter +preset):\n%s", p, diff)
		}
		if _, edits := a.(channels.Editor); !preset.Edit || !edits {
			t.Errorf("%s: preset edits %v, adapter edits %v; want both", p, preset.Edit, edits)
		}
		if _, buttons := a.(channels.Prompter); !preset.Buttons || !buttons {
			t.Errorf("%s: preset shows buttons %v, adapter shows buttons %v; want both", p, preset.Buttons, buttons)
		}
		if !preset.Typing {
			t.Errorf("%s: the preset does not type", p)
		}
	}
	if presets["none"] != (replay.Preset{}) {
		t.Errorf("none = %+v, want the zero preset", presets["none"])
	}
	if len(presets) != len(adapters)+1 {
		t.Errorf("presets %v, want one per platform and none", slices.Sorted(func(yield func(string) bool) {
			for k := range presets {
				if !yield(k) {
					return
				}
			}
		}))
	}
}
