package whatsapp

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSubscribedApps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Invalid OAuth access token","type":"OAuthException","code":190}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v25.0/555/subscribed_apps":
			fmt.Fprint(w, `{"data":[{"whatsapp_business_api_data":{"id":"77","name":"wasend","link":"https://x.test"}}]}`)
		case "/v25.0/666/subscribed_apps":
			fmt.Fprint(w, `{"data":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, Version: "v25.0", Timeout: 5 * time.Second})
	apps, err := c.SubscribedApps(t.Context(), "555", "tok")
	if err != nil || len(apps) != 1 || apps[0].Data.ID != "77" || apps[0].Data.Name != "wasend" {
		t.Errorf("555: %+v, %v", apps, err)
	}
	if apps, err := c.SubscribedApps(t.Context(), "666", "tok"); err != nil || len(apps) != 0 {
		t.Errorf("666: %+v, %v; want none", apps, err)
	}
	var apiErr *APIError
	if _, err := c.SubscribedApps(t.Context(), "555", "wrong"); !errors.As(err, &apiErr) || apiErr.Code != 190 {
		t.Errorf("a refused token: %v, want code 190", err)
	}
	if _, err := c.SubscribedApps(t.Context(), "", "tok"); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("no WABA id: %v", err)
	}
}
