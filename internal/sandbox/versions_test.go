package sandbox

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/whatsapp"
)

// TestServedVersions: the sandbox answers the current Graph API version, the
// one before it and an ended one (as Meta does), and refuses a version Meta
// never released, naming the current and the previous.
func TestServedVersions(t *testing.T) {
	_, ts := startServer(t, Options{})
	tests := []struct {
		version string
		want    int
	}{
		{whatsapp.DefaultVersion, http.StatusOK},
		{whatsapp.PreviousVersion, http.StatusOK},
		{"v20.0", http.StatusOK},
		{"v99.0", http.StatusBadRequest},
		{"v2", http.StatusBadRequest},
	}
	for i, tt := range tests {
		r := do(t, http.MethodPost, ts.URL+"/"+tt.version+"/1065/messages", "Bearer "+token, demo(fmt.Sprintf("+1650555123%d", i)))
		if r.err != nil || r.status != tt.want {
			t.Errorf("%s: status %d, err %v; want %d", tt.version, r.status, r.err, tt.want)
			continue
		}
		if tt.want != http.StatusOK && (r.graph.Error.Code != 100 || !strings.Contains(r.graph.Error.ErrorData.Details, "the current is "+whatsapp.DefaultVersion+", the previous "+whatsapp.PreviousVersion)) {
			t.Errorf("%s: error %+v; want code 100 naming the served versions", tt.version, r.graph.Error)
		}
	}
}
