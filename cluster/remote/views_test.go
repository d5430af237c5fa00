package remote

import (
	"testing"

	"github.com/acpgw/gateway/channels"
)

// Each generated view has exactly the capabilities of its mask, and all
// of those every view has.
func TestViews(t *testing.T) {
	a := &Adapter{}
	for mask := range 1 << 7 {
		v := view(a, mask)
		_, e := v.(channels.Editor)
		_, ty := v.(channels.Typer)
		_, p := v.(channels.Prompter)
		_, u := v.(channels.Uploader)
		_, f := v.(channels.Former)
		_, h := v.(channels.History)
		_, r := v.(channels.Reactor)
		got := 0
		for i, ok := range []bool{e, ty, p, u, f, h, r} {
			if ok {
				got |= 1 << i
			}
		}
		if got != mask {
			t.Errorf("view %d has the capabilities %07b", mask, got)
		}
		if _, ok := v.(channels.TypingStopper); ok != ty {
			t.Errorf("view %d: TypingStopper %v, Typer %v", mask, ok, ty)
		}
		for name, ok := range map[string]bool{
			"Titler":        is[channels.Titler](v),
			"Carder":        is[channels.Carder](v),
			"Commander":     is[channels.Commander](v),
			"TurnEnder":     is[channels.TurnEnder](v),
			"ToolDetailer":  is[channels.ToolDetailer](v),
			"AgentShower":   is[channels.AgentShower](v),
			"SessionShower": is[channels.SessionShower](v),
			"Checker":       is[channels.Checker](v),
		} {
			if !ok {
				t.Errorf("view %d is no %s", mask, name)
			}
		}
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}
