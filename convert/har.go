package convert

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// HAROptions say what of a recording becomes steps.
type HAROptions struct {
	// Static keeps static assets (style sheets, scripts, images, fonts),
	// which a browser fetches and caches, and which are left out by
	// default.
	Static bool
	// AllHosts keeps requests to hosts other than the first request's
	// (analytics, CDNs), which are left out by default: a plan must not
	// put load on hosts nobody meant to test.
	AllHosts bool
}

type har struct {
	Log struct {
		Creator struct{ Name, Version string }
		Entries []harEntry
	}
}

type harEntry struct {
	Started  string  `json:"startedDateTime"`
	Time     float64 `json:"time"`
	Resource string  `json:"_resourceType"`
	Request  struct {
		Method   string
		URL      string
		Headers  []struct{ Name, Value string }
		Cookies  []json.RawMessage
		PostData *struct {
			MimeType string
			Text     string
			Encoding string
		}
	}
	Response struct {
		Status  int
		Content struct{ MimeType string }
	}
}

// HAR converts a browser recording (HTTP Archive 1.2) into a flow of one
// VU: each request a step in the recording's order, with the pauses
// between them as think steps, its body, its own headers, and its status
// checked.
func HAR(r io.Reader, file string, o HAROptions) (*Result, error) {
	var h har
	dec := json.NewDecoder(r)
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(h.Log.Entries) == 0 {
		return nil, fmt.Errorf("%s: no log.entries: not an HTTP Archive, or an empty one", file)
	}
	var skipped []string
	skip := func(i int, e *harEntry, what string) {
		skipped = append(skipped, fmt.Sprintf("entry %d (%s %s): %s", i+1, e.Request.Method, e.Request.URL, what))
	}
	first, err := url.Parse(h.Log.Entries[0].Request.URL)
	if err != nil || first.Host == "" {
		return nil, fmt.Errorf("%s: entry 1: the URL %q", file, h.Log.Entries[0].Request.URL)
	}
	origin := first.Scheme + "://" + first.Host
	p := &planOut{Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), Vars: map[string]string{"base": origin}, Target: "${base}"}
	sc := &scenarioOut{Name: "recording", VUs: 1, Iterations: 1, Flow: []*stepOut{}}
	var lastEnd time.Time
	for i := range h.Log.Entries {
		e := &h.Log.Entries[i]
		u, err := url.Parse(e.Request.URL)
		if err != nil || u.Host == "" {
			skip(i, e, "its URL does not parse")
			continue
		}
		if u.Scheme+"://"+u.Host != origin && !o.AllHosts {
			skip(i, e, "another host than "+first.Host+" (--all-hosts keeps it)")
			continue
		}
		if isStatic(e, u) && !o.Static {
			skip(i, e, "a static asset (--static keeps it)")
			continue
		}
		start, err := time.Parse(time.RFC3339Nano, e.Started)
		if err == nil {
			if !lastEnd.IsZero() {
				if gap := start.Sub(lastEnd); gap >= 100*time.Millisecond {
					sc.Flow = append(sc.Flow, &stepOut{Think: fmt.Sprintf("%dms", gap.Round(100*time.Millisecond).Milliseconds())})
				}
			}
			if end := start.Add(time.Duration(math.Max(e.Time, 0) * float64(time.Millisecond))); end.After(lastEnd) {
				lastEnd = end
			}
		}
		s := &stepOut{Name: strings.ToUpper(e.Request.Method) + " " + u.Path}
		if m := strings.ToUpper(e.Request.Method); m != "GET" {
			s.Method = m
		}
		s.URL = u.RequestURI()
		if u.Scheme+"://"+u.Host != origin {
			s.URL = u.String()
		}
		for _, hd := range e.Request.Headers {
			if keepHeader(hd.Name) {
				if s.Headers == nil {
					s.Headers = map[string]string{}
				}
				s.Headers[hd.Name] = hd.Value
			}
		}
		if len(e.Request.Cookies) > 0 {
			skip(i, e, "its cookies (a plan sends what its steps extract)")
		}
		if pd := e.Request.PostData; pd != nil && pd.Text != "" {
			var doc any
			switch {
			case pd.Encoding != "":
				skip(i, e, "a binary body ("+pd.Encoding+")")
			case strings.Contains(pd.MimeType, "json") && json.Unmarshal([]byte(pd.Text), &doc) == nil:
				s.JSON = doc
				delete(s.Headers, "Content-Type") // json: sends its own
			default:
				s.Body = pd.Text
			}
		}
		if st := e.Response.Status; st > 0 {
			s.Check = map[string]any{"status": st}
			if st >= 300 && st < 400 {
				// The browser's request to the Location is the
				// recording's next entry, a step of its own.
				none := 0
				s.Redirects = &none
			}
		}
		sc.Flow = append(sc.Flow, s)
	}
	p.Scenarios = []*scenarioOut{sc}
	if err := checkSends(p, file, fmt.Sprintf("none of its %d entries was kept (--static keeps static assets, --all-hosts other hosts)", len(h.Log.Entries)), skipped); err != nil {
		return nil, err
	}
	from := fmt.Sprintf("the browser recording %s (%s %s) by perflab convert har", filepath.Base(file), h.Log.Creator.Name, h.Log.Creator.Version)
	return render(p, skipped, nil, from, "Every request was converted.", "entry")
}

// isStatic tells a static asset by the browser's resource type, else by
// the response's type or the path's extension.
func isStatic(e *harEntry, u *url.URL) bool {
	switch e.Resource {
	case "stylesheet", "script", "image", "font", "media", "manifest":
		return true
	case "document", "fetch", "xhr", "websocket", "eventsource":
		return false
	}
	mt := e.Response.Content.MimeType
	if strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "font/") || strings.Contains(mt, "css") || strings.Contains(mt, "javascript") {
		return true
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".css", ".js", ".mjs", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".woff", ".woff2", ".ttf", ".map", ".webp":
		return true
	}
	return false
}

// keepHeader tells the headers a step sends itself: the application's
// (Authorization, X-..., Content-Type), not those the browser or the
// connection adds.
func keepHeader(name string) bool {
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, ":"), strings.HasPrefix(n, "sec-"), strings.HasPrefix(n, "accept"),
		n == "host", n == "content-length", n == "connection", n == "user-agent", n == "referer", n == "origin",
		n == "cookie", n == "pragma", n == "cache-control", n == "upgrade-insecure-requests", n == "te",
		n == "if-none-match", n == "if-modified-since", n == "priority", n == "dnt":
		return false
	}
	return true
}
