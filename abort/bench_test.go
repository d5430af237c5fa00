package abort

import (
	"strings"
	"testing"
)

func BenchmarkIsStop(b *testing.B) {
	d := New(DefaultConfig(), "gateway")
	long := "Could you also update the README so the install section mentions the new " +
		"--config flag, and then stop using tabs in config.example.yaml? Wait for the build " +
		"first, then run all the unit tests again pls"
	if len(long) != 200 {
		b.Fatalf("len(long) = %d, want 200", len(long))
	}
	cases := []struct{ name, in string }{
		{"long_non_stop", long},
		{"short_non_stop", "please wait"},
		{"stop", "stop"},
		{"decorated_stop", "<@123456789012345678>, “STOP!!!”"},
		{"cjk_stop", "停止。"},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.IsStop(bc.in)
			}
		})
	}
	// The same long message with the length cap lifted shows what the cap
	// saves.
	uncapped := *d
	uncapped.maxIn = 1 << 20
	b.Run("long_non_stop_uncapped", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			uncapped.IsStop(long)
		}
	})
	b.Run("long_non_stop_uncapped_x10", func(b *testing.B) {
		in := strings.Repeat(long, 10)
		b.ReportAllocs()
		for b.Loop() {
			uncapped.IsStop(in)
		}
	})
}
