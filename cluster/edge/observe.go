package edge

import "github.com/acpgw/gateway/cluster/wire"

// published tells the Observer of a publish.
func (e *Edge) published(duplicate bool, err error) {
	if e.o.Observer == nil {
		return
	}
	result := "stored"
	switch {
	case err != nil:
		result = "error"
	case duplicate:
		result = "duplicate"
	}
	e.o.Observer.Published(e.o.Platform, result)
}

// performed tells the Observer of an operation answered.
func (e *Edge) performed(op, result string) {
	if e.o.Observer != nil {
		e.o.Observer.Performed(e.o.Platform, op, result)
	}
}

// outcome is a performed operation's result for the Observer.
func outcome(res wire.Result) string {
	if res.Err != nil {
		return "error"
	}
	return "ok"
}
