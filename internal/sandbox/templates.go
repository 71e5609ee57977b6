package sandbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// templatesPath extracts the WABA id from /vNN.N/{waba-id}/message_templates.
func templatesPath(u *url.URL) (string, bool) { return wabaEdgePath(u, "message_templates") }

// wabaEdgePath extracts the WABA id from /vNN.N/{waba-id}/{edge}.
func wabaEdgePath(u *url.URL, edge string) (string, bool) {
	parts := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(parts) != 3 || len(parts[0]) < 2 || parts[0][0] != 'v' || parts[2] != edge || parts[1] == "" {
		return "", false
	}
	id, err := url.PathUnescape(parts[1])
	return id, err == nil
}

// readable answers what Graph answers a read of a WABA's edge it refuses
// (a method other than GET, a bad token) and reports whether to go on.
func (s *Server) readable(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeGraphError(w, http.StatusMethodNotAllowed, 100, "method "+r.Method+" is not supported on "+r.URL.Path, "", 0)
		return false
	}
	if s.badToken(bearerToken(r)) {
		writeGraphErrorSubcode(w, http.StatusUnauthorized, 190, 0, "OAuthException",
			"Invalid OAuth access token - Cannot parse access token", "")
		return false
	}
	return true
}

// sandboxTemplates are the templates every sandbox WABA has: the demo
// template, spring_sale (one body parameter), a named-parameter one with an
// image header and a URL button, and one still pending.
var sandboxTemplates = json.RawMessage(`[
 {"name":"wasend_demo","language":"en_US","status":"APPROVED","category":"MARKETING","parameter_format":"POSITIONAL",
  "components":[{"type":"BODY","text":"Hi {{1}}, your code is {{2}}"}],"id":"1001"},
 {"name":"spring_sale","language":"en_US","status":"APPROVED","category":"MARKETING","parameter_format":"POSITIONAL",
  "components":[{"type":"BODY","text":"Hi {{1}}, spring is here!"}],"id":"1002"},
 {"name":"order_ready","language":"de","status":"APPROVED","category":"UTILITY","parameter_format":"NAMED",
  "components":[{"type":"HEADER","format":"IMAGE"},{"type":"BODY","text":"Hallo {{name}}, Bestellung {{order}} ist fertig."},
   {"type":"BUTTONS","buttons":[{"type":"URL","text":"Ansehen","url":"https://example.com/o/{{1}}"}]}],"id":"1003"},
 {"name":"autumn_sale","language":"en_US","status":"PENDING","category":"MARKETING","parameter_format":"POSITIONAL",
  "components":[{"type":"BODY","text":"Hi {{1}}, autumn is coming"}],"id":"1004"}
]`)

// serveTemplates answers GET /{version}/{waba-id}/message_templates with
// the sandbox's templates on one page; a bad token gets 190 as Graph does.
func (s *Server) serveTemplates(w http.ResponseWriter, r *http.Request) {
	if !s.readable(w, r) {
		return
	}
	waba, _ := templatesPath(r.URL)
	s.mu.Lock()
	s.tmplReads = append(s.tmplReads, TemplateRead{WABA: waba, Token: bearerToken(r)})
	data, ok := s.wabaTmpl[waba]
	s.mu.Unlock()
	if !ok {
		data = sandboxTemplates
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "paging": map[string]any{"cursors": map[string]string{"before": "MAZDZD", "after": "MjQZD"}}})
}

// TemplateRead is one GET /{waba-id}/message_templates: which WABA, with
// which token (a test's stand-in token, never a real one).
type TemplateRead struct{ WABA, Token string }

// TemplateReads returns the template reads so far, in order.
func (s *Server) TemplateReads() []TemplateRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tmplReads)
}

// SetTemplates makes WABA waba answer with templates (Graph's data array)
// from now on, in place of the sandbox's own: a test pauses or edits a
// template between an import and a resume, or gives two WABAs different
// templates.
func (s *Server) SetTemplates(waba string, templates json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wabaTmpl == nil {
		s.wabaTmpl = map[string]json.RawMessage{}
	}
	s.wabaTmpl[waba] = templates
}
