package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// The web chat answers a request (202) once the handler returned, so it
// marks the handler's context (channels.AckAfterHandler): a cluster edge
// then returns only once the event is stored, and nothing is answered
// that could still be lost.
func TestHandlerContextMarkedAckAfter(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	marked := make(chan bool, 8)
	in := serve(t, a, func(ctx context.Context, _ channels.Inbound) { marked <- channels.AcksAfterHandler(ctx) })
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	for _, req := range []struct {
		path string
		body map[string]string
	}{{"/messages", map[string]string{"author": "ann", "text": "hello"}}, {"/stop", map[string]string{"author": "ann"}}} {
		r := c.do(ctx, t, "POST", "/api/threads/"+id+req.path, req.body)
		if err := r.want(http.StatusAccepted); err != nil {
			t.Fatal(err)
		}
		in.next(t)
		if !<-marked {
			t.Errorf("POST %s: the handler's context is not marked AckAfterHandler", req.path)
		}
	}
}
