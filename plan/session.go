package plan

import (
	"slices"
	"strings"
)

// The checks of what a VU's HTTP requests carry from one to the next:
// redirects followed, cookies kept, authentication.

// sessionOptions checks http.redirects, http.cookies and http.auth; the
// references of http.auth's values are checked as the plan's headers'
// (variables and the environment).
func (v *validator) sessionOptions() {
	o := &v.p.HTTP
	if o.Redirects != nil && *o.Redirects < 0 {
		v.at(o.RedirectsPos, "http.redirects %d: want 0 (follow none) or more", *o.Redirects)
	}
	modes := []string{CookiesKeep, CookiesPerIteration, CookiesOff}
	if o.Cookies != "" && !slices.Contains(modes, o.Cookies) {
		v.at(o.CookiesPos, "http.cookies %q: want keep, per_iteration or off%s", o.Cookies, suggest(o.Cookies, modes))
	}
	if v.auth("http.auth", o.Auth, nil) && o.Auth != nil && o.Auth.Type != AuthNone {
		if h := authorizationHeader(v.p.Headers); h != nil {
			v.at(h.Pos, "headers: Authorization and http.auth both write the Authorization header: keep one")
		}
	}
}

// stepSession checks a request step's redirects and auth, with the names
// in scope sc.
func (v *validator) stepSession(st *Step, sc *scope) {
	if st.Redirects != nil && *st.Redirects < 0 {
		v.at(st.RedirectsPos, "step %s: redirects %d: want 0 (follow none) or more", st.Name, *st.Redirects)
	}
	if !v.auth("step "+st.Name+": auth", st.Auth, sc) || v.p.HTTP.AuthFor(st) == nil {
		return
	}
	switch own, plan := authorizationHeader(st.Headers), authorizationHeader(v.p.Headers); {
	case own != nil:
		v.at(own.Pos, "step %s: headers: Authorization and auth both write the Authorization header: keep one (auth: none sends the header as written)", st.Name)
	case plan != nil && st.Auth != nil:
		v.at(st.Auth.Pos, "step %s: auth and the plan's headers: Authorization both write the Authorization header: keep one", st.Name)
	}
}

// notRequest refuses redirects and auth on a step that sends no HTTP
// request of its own (they would be ignored).
func (v *validator) notRequest(st *Step) {
	if st.Redirects == nil && st.Auth == nil {
		return
	}
	pos := st.RedirectsPos
	if st.Auth != nil {
		pos = st.Auth.Pos
	}
	what := "step " + st.Name
	if st.IsTransaction() {
		what = "transaction " + st.Transaction
	}
	v.at(pos, "%s: redirects and auth are for HTTP requests (url): give them to the requests themselves", what)
}

// auth checks an auth setting: none, or basic or digest with a user. It
// reports whether a is absent or right.
func (v *validator) auth(who string, a *Auth, sc *scope) bool {
	if a == nil {
		return true
	}
	switch a.Type {
	case AuthNone:
		if a.User != nil || a.Password != nil {
			v.at(a.Pos, "%s: none takes no user or password", who)
			return false
		}
		return true
	case AuthBasic, AuthDigest:
	case "":
		v.at(a.Pos, "%s: type is required: basic or digest", who)
		return false
	default:
		v.at(a.Pos, "%s: type %q: want basic, digest or none%s", who, a.Type, suggest(a.Type, []string{AuthBasic, AuthDigest, AuthNone}))
		return false
	}
	if a.User == nil {
		v.at(a.Pos, "%s: user is required", who)
		return false
	}
	if a.Type == AuthBasic && a.User.T.IsLiteral() && strings.Contains(a.User.String(), ":") {
		v.at(a.User.Pos, "%s: user %q: a basic user name has no colon (RFC 7617)", who, a.User.String())
	}
	for _, t := range []*Text{a.User, a.Password} {
		if t != nil && strings.ContainsFunc(t.String(), isCTL) {
			v.at(t.Pos, "%s: %q has a control character", who, t.String())
		}
	}
	v.refs(a.User, sc)
	v.refs(a.Password, sc)
	return true
}

// authorizationHeader is the Authorization header among hs, if any.
func authorizationHeader(hs []Pair) *Pair {
	for i := range hs {
		if strings.EqualFold(hs[i].Name, "Authorization") {
			return &hs[i]
		}
	}
	return nil
}
