package discord

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// errResumeElsewhere ends a websocket dial that would resume the session
// at the gateway's URL rather than at the resume_gateway_url READY named.
// discordgo then forgets the URL it dialled, and Run opens again at once:
// its gateway lookup is answered with the resume URL (resumeURL.lookup).
var errResumeElsewhere = errors.New("discord: resuming at the session's resume_gateway_url")

// resumeURL makes discordgo resume where Discord asks. Discord's READY
// names a resume_gateway_url, and a RESUME sent anywhere else may fail;
// discordgo v0.29.0 ignores the field and resumes at the URL it first
// dialled, which it keeps in an unexported field. The adapter learns the
// URL from the raw READY, refuses a dial to any other URL while it knows
// one (the websocket dialer's Proxy hook sees the URL), and answers the
// lookup discordgo then makes (GET /api/v9/gateway) with the resume URL.
//
// When the resume fails the session starts anew (TestResumeFallsBackToIdentify):
// an INVALID_SESSION answer to the RESUME makes discordgo identify on the
// same connection; a resume URL that refuses the connection is forgotten
// (Run calls forget), the next attempt goes to the gateway's URL, and the
// RESUME discordgo still sends there is answered INVALID_SESSION, then
// identify. So with this adapter the gateway resumes at
// resume_gateway_url, and falls back to a fresh IDENTIFY; the events
// missed meanwhile are not replayed then: the new session is told
// (Sessions), and the gateway reads what its threads received in the
// gap from their history.
type resumeURL struct {
	mu       sync.Mutex // guards the fields below
	url      *url.URL   // the session's resume URL; nil when none is known
	redirect bool       // the next gateway lookup answers url
}

// learn records the resume_gateway_url of a READY's raw data; a READY
// without one (or with one that is not a ws(s) URL) forgets the last.
func (r *resumeURL) learn(raw json.RawMessage) {
	var d struct {
		ResumeGatewayURL string `json:"resume_gateway_url"`
	}
	_ = json.Unmarshal(raw, &d) // a READY discordgo could decode; a bad field is no URL
	u, err := url.Parse(d.ResumeGatewayURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		u = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.url = u
	r.redirect = false
}

// forget drops the resume URL: the resume could not connect there, so
// the next attempt goes to the gateway's URL, as a new session would.
func (r *resumeURL) forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.url = nil
	r.redirect = false
}

// check is called with the request of each websocket dial (its URL's
// scheme already http or https). It returns errResumeElsewhere when a
// resume URL is known and the dial goes elsewhere.
func (r *resumeURL) check(req *http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.url == nil || sameEndpoint(req.URL, r.url) {
		return nil
	}
	r.redirect = true
	return errResumeElsewhere
}

// lookup returns the URL to answer discordgo's gateway lookup with, once
// after check refused a dial.
func (r *resumeURL) lookup() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.redirect || r.url == nil {
		return "", false
	}
	r.redirect = false
	u := *r.url
	u.RawQuery = "" // discordgo appends ?v=9&encoding=json
	return u.String(), true
}

// sameEndpoint reports whether dial (http or https, as the websocket
// dialer rewrites it) goes where ws (ws or wss) points.
func sameEndpoint(dial, ws *url.URL) bool {
	scheme := map[string]string{"ws": "http", "wss": "https"}[ws.Scheme]
	return dial.Scheme == scheme && strings.EqualFold(dial.Host, ws.Host) &&
		strings.TrimSuffix(dial.Path, "/") == strings.TrimSuffix(ws.Path, "/")
}

// gatewayAnswer is the response to GET /api/v9/gateway that points at u.
func gatewayAnswer(req *http.Request, u string) *http.Response {
	body, _ := json.Marshal(map[string]string{"url": u})
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
