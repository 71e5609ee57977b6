package sandbox

import (
	"net/http"
	"net/url"
	"strings"
)

// subscribedAppsPath extracts the WABA id from /vNN.N/{waba-id}/subscribed_apps.
func subscribedAppsPath(u *url.URL) (string, bool) {
	parts := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(parts) != 3 || len(parts[0]) < 2 || parts[0][0] != 'v' || parts[2] != "subscribed_apps" || parts[1] == "" {
		return "", false
	}
	id, err := url.PathUnescape(parts[1])
	return id, err == nil
}

// serveSubscribedApps answers GET /{version}/{waba-id}/subscribed_apps:
// every sandbox WABA has the sandbox's app subscribed, unless a test
// unsubscribed it (SetSubscribed).
func (s *Server) serveSubscribedApps(w http.ResponseWriter, r *http.Request, waba string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeGraphError(w, http.StatusMethodNotAllowed, 100, "method "+r.Method+" is not supported on "+r.URL.Path, "", 0)
		return
	}
	if s.badToken(bearerToken(r)) {
		writeGraphErrorSubcode(w, http.StatusUnauthorized, 190, 0, "OAuthException",
			"Invalid OAuth access token - Cannot parse access token", "")
		return
	}
	s.mu.Lock()
	off := s.unsubscribed[waba]
	s.mu.Unlock()
	data := []any{}
	if !off {
		data = append(data, map[string]any{"whatsapp_business_api_data": map[string]string{
			"id": "100000000000900", "name": "wasend sandbox", "link": "https://example.com/wasend-sandbox"}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// SetSubscribed subscribes (the default) or unsubscribes the sandbox's app
// from WABA waba's webhooks.
func (s *Server) SetSubscribed(waba string, subscribed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unsubscribed == nil {
		s.unsubscribed = map[string]bool{}
	}
	s.unsubscribed[waba] = !subscribed
}
