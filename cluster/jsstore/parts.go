package jsstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// partHeader marks one part of a record larger than the NATS server's
// maximum payload (1 MiB by default; an agent's frame may be 10 MiB): "i/n",
// the parts published in order on the record's subject.
const partHeader = "Gateway-Part"

// headroom is kept below the server's maximum payload for the headers.
const headroom = 4 << 10

// publishAsync publishes m asynchronously; when the connection has too
// many publishes unacknowledged (all writers together: 4,000), it waits
// for them to drain and tries again.
func publishAsync(js jetstream.JetStream, m *nats.Msg) (jetstream.PubAckFuture, error) {
	for try := 0; ; try++ {
		f, err := js.PublishMsgAsync(m)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) || try == 20 {
			return f, err
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Second):
		}
	}
}

// publishParts publishes data on subject asynchronously, in parts if it is
// larger than the connection allows, and returns the acks to wait for.
func publishParts(js jetstream.JetStream, subject string, data []byte) ([]jetstream.PubAckFuture, error) {
	ms := parts(js, subject, data)
	fs := make([]jetstream.PubAckFuture, 0, len(ms))
	for _, m := range ms {
		f, err := publishAsync(js, m)
		if err != nil {
			return fs, err
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// parts splits data into the messages of one record: one, or several
// with the part header if data is larger than the connection allows.
func parts(js jetstream.JetStream, subject string, data []byte) []*nats.Msg {
	limit := int(js.Conn().MaxPayload()) - headroom
	if limit <= 0 || len(data) <= limit {
		return []*nats.Msg{{Subject: subject, Data: data}}
	}
	n := (len(data) + limit - 1) / limit
	ms := make([]*nats.Msg, n)
	for i := range n {
		m := nats.NewMsg(subject)
		m.Header.Set(partHeader, strconv.Itoa(i+1)+"/"+strconv.Itoa(n))
		m.Data = data[i*limit : min((i+1)*limit, len(data))]
		ms[i] = m
	}
	return ms
}

// joiner puts records published in parts back together. A record whose
// parts are not all there in order (a failed write, or its first parts
// dropped by the retention) is skipped.
type joiner struct {
	buf  []byte
	next int // the part expected next; 0: none
	of   int
}

// add takes one message; it returns a whole record when there is one.
func (j *joiner) add(m jetstream.Msg) ([]byte, bool, error) {
	h := m.Headers().Get(partHeader)
	if h == "" {
		j.next = 0
		return m.Data(), true, nil
	}
	i, n, err := parsePart(h)
	if err != nil {
		return nil, false, err
	}
	if i == 1 {
		j.buf, j.next, j.of = append(j.buf[:0], m.Data()...), 2, n
	} else if i == j.next && n == j.of {
		j.buf, j.next = append(j.buf, m.Data()...), j.next+1
	} else {
		j.next = 0
		return nil, false, nil
	}
	if j.next > j.of {
		j.next = 0
		return j.buf, true, nil
	}
	return nil, false, nil
}

func parsePart(h string) (i, n int, err error) {
	a, b, ok := strings.Cut(h, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || i < 1 || n < 2 || i > n {
		return 0, 0, fmt.Errorf("bad %s header %q", partHeader, h)
	}
	return i, n, nil
}
