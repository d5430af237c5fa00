package config

import "testing"

// FuzzLoad feeds YAML to the loader: it never panics, and what it accepts
// validates, resolves for any scope, and loads back from Redacted. (The
// example file is left out of the seeds: the fuzzer spends its time
// minimising inputs that large. TestExampleFile covers it.)
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		overridesYAML,
		secretsYAML,
		"",
		"busy: interrupt\n",
		"acp: {stream: {metaMode: quiet, tagVisibility: {plan: true}}}\n",
		"agents: {default: a, list: {a: {command: [x, '${OPENAI_API_KEY}'], env: {K: v}}}}\n",
		"overrides: {discord: {guilds: {1: {acp: {stream: {maxTurnChars: 5.0}}}}}}\n",
		"channels: {web: {token: '$${X}', enabled: false}, discord: {token: t}}\n",
		"access: {discord: {guilds: [1, '2'], users: [u]}}\n",
		"typing: {ttl: 0}\nagents: {idleTimeout: 1h}\n",
		"a: [\n",
		"- 1\n",
		"~: 1\n",
	} {
		f.Add([]byte(seed))
	}
	env := append([]string{"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o", "GEMINI_API_KEY=g"}, append(secretEnv, testEnv...)...)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := LoadOptions{Platforms: testPlatforms, Environ: env}.load("fuzz.yaml", data)
		if err != nil {
			return
		}
		if err := Validate(c); err != nil {
			t.Fatalf("Load accepted a configuration that does not validate: %v", err)
		}
		for _, s := range []Scope{{}, {Platform: "web"}, {Platform: "discord", Space: "1", Channel: "2"}, {Platform: "slack", Space: "T01", Channel: "C01"}} {
			c.Policy(s)
			Explain(c, s)
		}
		r := Redacted(c)
		if _, err := (LoadOptions{Platforms: testPlatforms, Environ: testEnv}).load("redacted.yaml", []byte(r)); err != nil {
			t.Fatalf("Redacted output does not load: %v\n%s", err, r)
		}
	})
}
