package e2e

import (
	"testing"
)

// Run runs every case of the suite against the platform newDriver
// drives; newDriver starts a new fake for each case (after the case's
// goroutine check began). env is the environment variable that makes
// the test binary the demo agent.
func Run(t *testing.T, env string, newDriver func(t *testing.T) Driver) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Setup)
	}{
		{"Conversation", testConversation},
		{"StopIsAcknowledgedAtOnce", testStopIsAcknowledgedAtOnce},
		{"ReactionsThroughATurnsLife", testReactionsThroughATurnsLife},
		{"PermissionPromptShowsTheHiddenCommandEnd", testPromptShowsTheHiddenCommandEnd},
		{"CatchUpAfterRestart", testCatchUpAfterRestart},
		{"DeleteEndsThread", testDeleteEndsThread},
		{"Backfill", testBackfill},
		{"SteerModel", testSteerModel},
		{"SteerQuestions", testSteerQuestions},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("starts agent processes")
			}
			LeakCheck(t)
			c.run(t, Setup{Driver: newDriver(t), AgentEnv: env})
		})
	}
}

// Setup is what a case gets: the driver of a new fake, and what starting
// a gateway needs.
type Setup struct {
	Driver
	AgentEnv string
}

// start starts a gateway for the case with c (its AgentEnv the setup's).
func (s Setup) start(t *testing.T, c Config) *Gateway {
	t.Helper()
	c.AgentEnv = s.AgentEnv
	return Start(t, s.Driver, c)
}
