package sandbox

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

func TestPhoneNumberRead(t *testing.T) {
	s, ts := startServer(t, Options{Faults: Faults{
		UnknownNumbers: []string{"100000000000009"},
		BadTokens:      []string{"revoked-token"},
		FatalAccounts:  map[string]FatalAccount{"100000000000008": {Code: 131031}},
	}})
	tests := []struct {
		name          string
		id, auth      string
		status, code  int
		subcode       int
		wantNumberOut bool
	}{
		{"known number", "100000000000001", "Bearer " + token, 200, 0, 0, true},
		{"listed as unknown", "100000000000009", "Bearer " + token, 400, 100, 33, false},
		{"not all digits", "abc", "Bearer " + token, 400, 100, 33, false},
		{"bad token", "100000000000001", "Bearer revoked-token", 401, 190, 0, false},
		{"no token", "100000000000001", "", 401, 190, 0, false},
		{"fatal on sending only", "100000000000008", "Bearer " + token, 200, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/v25.0/"+tt.id+"?fields=id,display_phone_number", nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tt.status, data)
			}
			if tt.wantNumberOut {
				var p phoneNumberBody
				if err := json.Unmarshal(data, &p); err != nil || p.ID != tt.id || p.DisplayPhoneNumber == "" || p.QualityRating != "GREEN" || p.Throughput.Level == "" {
					t.Errorf("number %s: %+v, %v", data, p, err)
				}
				return
			}
			var e graphErrorWithSubcode
			if err := json.Unmarshal(data, &e); err != nil || e.Error.Code != tt.code || e.Error.Subcode != tt.subcode || e.Error.Message == "" {
				t.Errorf("error %s: want code %d subcode %d (%v)", data, tt.code, tt.subcode, err)
			}
		})
	}
	if n := len(s.Records()); n != 0 {
		t.Errorf("%d records after reads only; records are messages sent", n)
	}
	// A revoked token is refused when sending too.
	r := do(t, http.MethodPost, ts.URL+"/v25.0/100000000000001/messages", "Bearer revoked-token", demo("+16505551234"))
	if r.status != 401 || r.graph.Error.Code != 190 {
		t.Errorf("send with a revoked token: HTTP %d code %d, want 401/190", r.status, r.graph.Error.Code)
	}
}
