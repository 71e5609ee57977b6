package sandbox

import "net/http"

// serveSubscribedApps answers GET /{version}/{waba-id}/subscribed_apps:
// every sandbox WABA has the sandbox's app subscribed, unless a test
// unsubscribed it (SetSubscribed).
func (s *Server) serveSubscribedApps(w http.ResponseWriter, r *http.Request, waba string) {
	if !s.readable(w, r) {
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
