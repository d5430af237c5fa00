package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/acpgw/gateway/channels"
)

// The identities of the web chat. A person is who their token says; what a
// request's body claims is never trusted.
const (
	// IDPrefix starts every web chat Author.ID: "web:" + the name of a
	// named token (Options.Users).
	IDPrefix = "web:"
	// OwnerID is the Author.ID of the holder of Options.Token.
	OwnerID = IDPrefix + "owner"
	// LocalID is the Author.ID of the one local user of this machine:
	// the holder of Options.LocalToken, or everyone on a loopback
	// listener without any token.
	LocalID = IDPrefix + "local"
)

// identity is who sent a request, as its token tells.
type identity struct {
	id string // Author.ID
	// name is the author name: the token's name when fixed, else the
	// label used when the request gives none.
	name string
	// fixed: the name is the token's (a named token); a request may not
	// give another. Otherwise the person picks a label that is shown as
	// the author and trusted for nothing.
	fixed bool
}

// tokenKey is one token that admits someone, kept as its SHA-256 so that
// comparing takes the same time whatever the token's length.
type tokenKey struct {
	sum [sha256.Size]byte
	who identity
}

// keysFor returns the tokens of o: one per named user, then the owner's,
// then the local user's. Empty tokens admit nobody and are left out.
func keysFor(o Options) []tokenKey {
	var keys []tokenKey
	for name, tok := range o.Users {
		if tok == "" {
			continue
		}
		keys = append(keys, tokenKey{sum: sha256.Sum256([]byte(tok)), who: identity{id: IDPrefix + name, name: name, fixed: true}})
	}
	if o.Token != "" {
		keys = append(keys, tokenKey{sum: sha256.Sum256([]byte(o.Token)), who: identity{id: OwnerID, name: "owner"}})
	}
	if o.LocalToken != "" {
		keys = append(keys, tokenKey{sum: sha256.Sum256([]byte(o.LocalToken)), who: identity{id: LocalID, name: "guest"}})
	}
	return keys
}

// guarded reports whether o requires a token: Token, Users or LocalToken
// is set.
func (o Options) guarded() bool { return o.Token != "" || len(o.Users) > 0 || o.LocalToken != "" }

// identify returns who r is. Without any token configured everyone is the
// one local user (Run only serves that on loopback); otherwise the token
// r carries, as "Authorization: Bearer" or "?token=", must be one of the
// configured ones. Every configured token is compared, in constant time.
func (a *Adapter) identify(r *http.Request) (identity, bool) {
	if !a.o.guarded() {
		return identity{id: LocalID, name: "guest"}, true
	}
	got := tokenOf(r)
	if got == "" {
		return identity{}, false
	}
	sum := sha256.Sum256([]byte(got))
	var who identity
	found := 0
	for _, k := range a.keys {
		if subtle.ConstantTimeCompare(sum[:], k.sum[:]) == 1 {
			who, found = k.who, 1
		}
	}
	return who, found == 1
}

// identityKey is the context key of a request's identity.
type identityKey struct{}

func withIdentity(r *http.Request, who identity) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, who))
}

func identityOf(r *http.Request) identity {
	who, _ := r.Context().Value(identityKey{}).(identity)
	return who
}

// author returns the author of a request of who with the given fields.
// The id is always who's. A request that names someone else (an authorId
// other than who's id, or an author other than a named token's name) is
// refused: it is a mistake or an attempt to act as another person, and
// either way the client must not believe it acted as the one it named.
func (who identity) author(f authorFields) (channels.Author, error) {
	if f.AuthorID != "" && f.AuthorID != who.id {
		return channels.Author{}, fmt.Errorf("your token is %s's; \"authorId\" %s names someone else (who you are comes from the token, not the request)", who.id, quote(f.AuthorID))
	}
	if who.fixed && f.Author != "" && f.Author != who.name {
		return channels.Author{}, fmt.Errorf("your token is %s's; \"author\" %s names someone else (who you are comes from the token, not the request)", who.name, quote(f.Author))
	}
	name := f.Author
	if name == "" {
		name = who.name
	}
	return channels.Author{ID: who.id, Name: name}, nil
}

// meBody is the JSON of GET /api/me.
type meBody struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Fixed: the name is the token's; the page shows it instead of
	// asking.
	Fixed bool `json:"fixed"`
	// Agents are the agents a new thread may pick (Options.Agents), the
	// default first.
	Agents []string `json:"agents"`
	// Commands are the gateway's commands (channels.Commands), for the
	// palette of a thread whose session is not shown yet.
	Commands []commandView `json:"commands"`
}

// me serves GET /api/me: who the request's token says its sender is.
func (s *server) me(w http.ResponseWriter, r *http.Request) {
	who := identityOf(r)
	writeJSON(w, http.StatusOK, meBody{ID: who.id, Name: who.name, Fixed: who.fixed, Agents: s.a.agents(), Commands: sessionViewOf(channels.SessionInfo{Commands: channels.Commands()}).Commands})
}

// agents returns the list of SetAgents, else Options.Agents, never nil
// (the JSON shows a list).
func (a *Adapter) agents() []string {
	list := a.o.Agents
	if p := a.picks.Load(); p != nil {
		list = *p
	}
	if list == nil {
		return []string{}
	}
	return list
}

// SetAgents replaces Options.Agents, the agents a new thread may pick (a
// configuration reload); pages loaded from now on offer them.
func (a *Adapter) SetAgents(names []string) {
	names = slices.Clone(names)
	a.picks.Store(&names)
}

// tokenNeeded is the answer to a request without a valid token: what is
// missing, where to find it, and how to send it.
// tokenOf is the token a request carries: its bearer token, else its
// ?token=; "" when none.
func tokenOf(r *http.Request) string {
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(h)
	}
	return r.URL.Query().Get("token")
}

// tokenRefused is the 401's message for request r: a token given and not
// accepted (mistyped, or an old one) is told apart from none given.
func (a *Adapter) tokenRefused(r *http.Request) string {
	if tokenOf(r) == "" {
		return a.tokenNeeded()
	}
	msg := "this access token is not accepted here (mistyped, or replaced since)"
	if a.o.TokenHelp != "" {
		msg += ": " + a.o.TokenHelp
	}
	return msg
}

func (a *Adapter) tokenNeeded() string {
	msg := "this web chat needs its access token"
	if a.o.TokenHelp != "" {
		msg += ": " + a.o.TokenHelp
	}
	return msg + " (send it as Authorization: Bearer <token>, or open the page once with ?token=<token>)"
}
