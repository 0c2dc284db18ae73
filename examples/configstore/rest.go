package configstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxBody bounds a request body.
const maxBody = 256 << 20

// NewHandler returns the REST API of s, under /api/v1 and, as in CPS, under
// /cps/api/v1. Every response has a Server-Timing header ("app;dur=" and the
// milliseconds spent before the response was written) and an X-Request-ID
// header (the request's, or a new one). If requestLog is not nil it gets one
// line per request: start and end times (RFC 3339, UTC), request id,
// operation and status, as in
//
//	2026-11-23T10:00:00.123456789Z 2026-11-23T10:00:00.125Z req=abc op=get-node status=200
func NewHandler(s *Store, requestLog io.Writer) http.Handler {
	a := &api{s: s}
	routes := []struct {
		pattern, op string
		h           handlerFunc
	}{
		{"GET /dataspaces", "list-dataspaces", a.listDataspaces},
		{"POST /dataspaces", "create-dataspace", a.createDataspace},
		{"DELETE /dataspaces/{ds}", "delete-dataspace", a.deleteDataspace},
		{"GET /dataspaces/{ds}/anchors", "list-anchors", a.listAnchors},
		{"POST /dataspaces/{ds}/anchors", "create-anchor", a.createAnchor},
		{"DELETE /dataspaces/{ds}/anchors/{a}", "delete-anchor", a.deleteAnchor},
		{"GET /dataspaces/{ds}/anchors/{a}/nodes", "get-node", a.getNode},
		{"GET /dataspaces/{ds}/anchors/{a}/node", "get-node", a.getNode}, // CPS's older, singular form
		{"POST /dataspaces/{ds}/anchors/{a}/nodes", "create-node", a.createNode},
		{"PUT /dataspaces/{ds}/anchors/{a}/nodes", "replace-node", a.replaceNode},
		{"PATCH /dataspaces/{ds}/anchors/{a}/nodes", "update-node", a.updateNode},
		{"DELETE /dataspaces/{ds}/anchors/{a}/nodes", "delete-node", a.deleteNode},
		{"GET /dataspaces/{ds}/anchors/{a}/nodes/query", "query-nodes", a.query},
		{"POST /dataspaces/{ds}/anchors/{a}/generate", "generate", a.generate},
	}
	mux := http.NewServeMux()
	for _, prefix := range []string{"/api/v1", "/cps/api/v1"} {
		for _, r := range routes {
			method, path, _ := strings.Cut(r.pattern, " ")
			mux.Handle(method+" "+prefix+path, serve(r.op, r.h))
		}
	}
	return instrument(mux, requestLog)
}

// handlerFunc serves one route: it returns the status and JSON body of a
// success, or an error that errorStatus maps to a status.
type handlerFunc func(r *http.Request) (status int, body []byte, err error)

// serve runs h and writes its response.
func serve(op string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec, ok := w.(*recorder); ok {
			rec.op = op
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		status, body, err := h(r)
		if err != nil {
			status = errorStatus(err)
			body, _ = json.Marshal(struct {
				Status  int    `json:"status"`
				Message string `json:"message"`
			}{status, err.Error()})
		}
		if body != nil {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		w.Write(body)
	})
}

func errorStatus(err error) int {
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrExists):
		return http.StatusConflict
	case errors.Is(err, ErrBadInput):
		return http.StatusBadRequest
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, context.Canceled):
		return 499 // client closed the request, as nginx logs it
	}
	return http.StatusInternalServerError
}

// api holds the route handlers.
type api struct{ s *Store }

func (a *api) listDataspaces(r *http.Request) (int, []byte, error) {
	names, err := a.s.Dataspaces(r.Context())
	return jsonBody(http.StatusOK, names, err)
}

func (a *api) createDataspace(r *http.Request) (int, []byte, error) {
	ds := r.URL.Query().Get("dataspace-name")
	err := a.s.CreateDataspace(r.Context(), ds)
	return jsonBody(http.StatusCreated, map[string]string{"dataspace": ds}, err)
}

func (a *api) deleteDataspace(r *http.Request) (int, []byte, error) {
	return http.StatusNoContent, nil, a.s.DeleteDataspace(r.Context(), r.PathValue("ds"))
}

func (a *api) listAnchors(r *http.Request) (int, []byte, error) {
	names, err := a.s.Anchors(r.Context(), r.PathValue("ds"))
	return jsonBody(http.StatusOK, names, err)
}

func (a *api) createAnchor(r *http.Request) (int, []byte, error) {
	ds, anchor := r.PathValue("ds"), r.URL.Query().Get("anchor-name")
	err := a.s.CreateAnchor(r.Context(), ds, anchor)
	return jsonBody(http.StatusCreated, map[string]string{"dataspace": ds, "anchor": anchor}, err)
}

func (a *api) deleteAnchor(r *http.Request) (int, []byte, error) {
	return http.StatusNoContent, nil, a.s.DeleteAnchor(r.Context(), r.PathValue("ds"), r.PathValue("a"))
}

func (a *api) getNode(r *http.Request) (int, []byte, error) {
	d, err := descendants(r.URL.Query())
	if err != nil {
		return 0, nil, err
	}
	body, err := a.s.GetNode(r.Context(), r.PathValue("ds"), r.PathValue("a"), xpath(r), d)
	return http.StatusOK, body, err
}

func (a *api) createNode(r *http.Request) (int, []byte, error) {
	return a.write(r, http.StatusCreated, a.s.CreateNode)
}

func (a *api) replaceNode(r *http.Request) (int, []byte, error) {
	return a.write(r, http.StatusOK, a.s.ReplaceNode)
}

func (a *api) updateNode(r *http.Request) (int, []byte, error) {
	return a.write(r, http.StatusOK, a.s.UpdateNode)
}

// write passes the xpath parameter and the body to one of the Store's
// writing methods.
func (a *api) write(r *http.Request, status int, f func(ctx context.Context, ds, anchor, xpath string, data []byte) error) (int, []byte, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, err
	}
	return status, nil, f(r.Context(), r.PathValue("ds"), r.PathValue("a"), xpath(r), data)
}

func (a *api) deleteNode(r *http.Request) (int, []byte, error) {
	return http.StatusNoContent, nil, a.s.DeleteNode(r.Context(), r.PathValue("ds"), r.PathValue("a"), xpath(r))
}

func (a *api) query(r *http.Request) (int, []byte, error) {
	q := r.URL.Query()
	d, err := descendants(q)
	if err != nil {
		return 0, nil, err
	}
	body, err := a.s.Query(r.Context(), r.PathValue("ds"), r.PathValue("a"), q.Get("cps-path"), d)
	return http.StatusOK, body, err
}

// generate replaces the anchor's tree by GenerateNetwork(nodes, tps).
func (a *api) generate(r *http.Request) (int, []byte, error) {
	q := r.URL.Query()
	nodes, err := intParam(q, "nodes", -1, 1, 1_000_000)
	if err != nil {
		return 0, nil, err
	}
	tps, err := intParam(q, "tps", 0, 0, 1000)
	if err != nil {
		return 0, nil, err
	}
	err = a.s.ReplaceNode(r.Context(), r.PathValue("ds"), r.PathValue("a"), rootPath, GenerateNetwork(nodes, tps))
	return jsonBody(http.StatusOK, map[string]int{"nodes": nodes, "termination-points": nodes * tps}, err)
}

// xpath is the xpath parameter, "/" by default.
func xpath(r *http.Request) string {
	if x := r.URL.Query().Get("xpath"); x != "" {
		return x
	}
	return rootPath
}

// descendants reads the descendants parameter or, failing it, CPS's older
// include-descendants=true|false.
func descendants(q url.Values) (Descendants, error) {
	if v := q.Get("descendants"); v != "" {
		return ParseDescendants(v)
	}
	v := q.Get("include-descendants")
	if v == "" {
		return None, nil
	}
	all, err := strconv.ParseBool(v)
	if err != nil {
		return None, fmt.Errorf("%w: include-descendants %q: want true or false", ErrBadInput, v)
	}
	if all {
		return All, nil
	}
	return None, nil
}

// intParam reads an integer parameter in [lo, hi]; def < 0 makes it required.
func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	v := q.Get(name)
	if v == "" && def >= 0 {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%w: %s=%q: want an integer from %d to %d", ErrBadInput, name, v, lo, hi)
	}
	return n, nil
}

func jsonBody(status int, v any, err error) (int, []byte, error) {
	if err != nil {
		return 0, nil, err
	}
	body, err := json.Marshal(v)
	return status, body, err
}
