package channels

import "context"

// ackAfterKey marks a handler's context (AckAfterHandler).
type ackAfterKey struct{}

// AckAfterHandler marks ctx, the context an adapter gives its handler
// (Adapter.Run's h) with an event, as that of an event the adapter
// acknowledges once the handler returns (the web chat's 202, Discord's
// "Sent … to the agent"): a handler that would return before the event is
// kept (a cluster edge, which otherwise returns once it took the event,
// before it is stored) returns only once it is, so that nothing is
// acknowledged that could still be lost.
func AckAfterHandler(ctx context.Context) context.Context {
	return context.WithValue(ctx, ackAfterKey{}, true)
}

// AcksAfterHandler reports whether ctx was marked by AckAfterHandler.
func AcksAfterHandler(ctx context.Context) bool {
	marked, _ := ctx.Value(ackAfterKey{}).(bool)
	return marked
}
