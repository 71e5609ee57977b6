package whatsapp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTemplatesFollowsPages: the cursor of each page asks for the next,
// until a page without a next link.
func TestTemplatesFollowsPages(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v25.0/555/message_templates" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":{"message":"bad","code":100}}`, http.StatusBadRequest)
			return
		}
		after := r.URL.Query().Get("after")
		asked = append(asked, after)
		w.Header().Set("Content-Type", "application/json")
		if after == "" {
			fmt.Fprint(w, `{"data":[{"name":"a","language":"en_US","status":"APPROVED","components":[{"type":"BODY","text":"{{1}}"}]}],
				"paging":{"cursors":{"after":"P2"},"next":"https://graph.example/next"}}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"name":"b","language":"de","status":"PENDING","parameter_format":"NAMED","components":[]}],"paging":{"cursors":{"after":"P3"}}}`)
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, Version: "v25.0", Timeout: 5 * time.Second})
	ts, err := c.Templates(t.Context(), "555", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "a" || ts[1].ParameterFormat != "NAMED" || string(ts[0].Components) == "" {
		t.Errorf("templates %+v", ts)
	}
	if len(asked) != 2 || asked[1] != "P2" {
		t.Errorf("pages asked %q", asked)
	}
	if _, err := c.Templates(t.Context(), "555", "wrong"); err == nil {
		t.Error("a refused token read templates")
	}
}
