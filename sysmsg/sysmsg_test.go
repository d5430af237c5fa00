package sysmsg

import (
	"strings"
	"testing"
)

func TestPrefix(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", ""},
		{"whitespace only", " \t\n ", ""},
		{"plain", "Turn cancelled.", "⚙️ Turn cancelled."},
		{"trimmed", "  Turn cancelled.\n", "⚙️ Turn cancelled."},
		{"already marked", "⚙️ Turn cancelled.", "⚙️ Turn cancelled."},
		{"marked without space", "⚙️Turn cancelled.", "⚙️ Turn cancelled."},
		{"marked without selector", "⚙ Turn cancelled.", "⚙️ Turn cancelled."},
		{"marked without selector or space", "⚙Turn cancelled.", "⚙️ Turn cancelled."},
		{"marked with extra spaces", "  ⚙️   Turn cancelled.", "⚙️ Turn cancelled."},
		{"doubled mark", "⚙️ ⚙️ Turn cancelled.", "⚙️ Turn cancelled."},
		{"doubled selector", "⚙\uFE0F\uFE0F Turn cancelled.", "⚙️ Turn cancelled."},
		{"mark only", "⚙️ ", ""},
		{"bare gear", "⚙", ""},
		{"gear inside text kept", "Settings ⚙️ changed", "⚙️ Settings ⚙️ changed"},
		{"multiline kept", "line one\nline two", "⚙️ line one\nline two"},
		{"other emoji kept", "🛠️ tool", "⚙️ 🛠️ tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Prefix(tc.in)
			if got != tc.want {
				t.Errorf("Prefix(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := Prefix(got); again != got {
				t.Errorf("Prefix(Prefix(%q)) = %q, want %q", tc.in, again, got)
			}
		})
	}
}

func TestMark(t *testing.T) {
	if want := "\u2699\uFE0F "; Mark != want {
		t.Errorf("Mark = %q, want %q", Mark, want)
	}
}

func FuzzPrefix(f *testing.F) {
	for _, s := range []string{"", " ", "hello", "⚙️ hi", "⚙hi", "⚙\uFE0F", "⚙️ ⚙️ x", " \uFE0F x", "\xff⚙"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Prefix(s)
		if got != "" && !strings.HasPrefix(got, Mark) {
			t.Fatalf("Prefix(%q) = %q, want \"\" or a string starting with %q", s, got, Mark)
		}
		if again := Prefix(got); again != got {
			t.Fatalf("Prefix(Prefix(%q)) = %q, want %q", s, again, got)
		}
		if strings.HasPrefix(strings.TrimPrefix(got, Mark), gear) {
			t.Fatalf("Prefix(%q) = %q, doubled mark", s, got)
		}
	})
}

// TestShare: one rounding rule for every context share, and "<1%" for a
// share above 0 and under 1 %.
func TestShare(t *testing.T) {
	for _, c := range []struct {
		used, size int64
		want       string
	}{
		{0, 1000, "0%"}, {2140, 258400, "<1%"}, {9, 1000, "<1%"}, {10, 1000, "1%"}, {14, 1000, "1%"},
		{15, 1000, "2%"}, {625, 1000, "63%"}, {1000, 1000, "100%"}, {1200, 1000, "120%"},
	} {
		if got := Share(c.used, c.size); got != c.want {
			t.Errorf("Share(%d, %d) = %q, want %q", c.used, c.size, got, c.want)
		}
	}
}
