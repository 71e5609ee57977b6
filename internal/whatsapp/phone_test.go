package whatsapp

import (
	"errors"
	"net"
	"strings"
	"testing"
)

func TestPhoneNumber(t *testing.T) {
	const id = "106540352242922"
	tests := []struct {
		name    string
		status  int
		answer  string
		check   func(t *testing.T, p PhoneNumber, err error)
		wantErr bool
	}{
		{"the number", 200, `{"verified_name":"Jasper's Market","display_phone_number":"+1 631-555-5555","quality_rating":"GREEN","throughput":{"level":"STANDARD"},"id":"` + id + `"}`,
			func(t *testing.T, p PhoneNumber, err error) {
				if err != nil || p.ID != id || p.VerifiedName != "Jasper's Market" || p.DisplayPhoneNumber != "+1 631-555-5555" ||
					p.QualityRating != "GREEN" || p.Throughput.Level != "STANDARD" {
					t.Errorf("got %+v, %v", p, err)
				}
			}, false},
		{"unknown id: 400, code 100, subcode 33", 400, `{"error":{"message":"Unsupported get request. Object with ID '` + id + `' does not exist","type":"GraphMethodException","code":100,"error_subcode":33,"fbtrace_id":"A1"}}`,
			func(t *testing.T, _ PhoneNumber, err error) {
				var api *APIError
				if !errors.As(err, &api) || api.Code != 100 || api.Subcode != 33 || api.HTTPStatus != 400 {
					t.Errorf("err = %#v, want an APIError 100/33", err)
				}
			}, true},
		{"bad token: 401, code 190, token echoed", 401, `{"error":{"message":"Invalid OAuth access token ` + testToken + `","type":"OAuthException","code":190}}`,
			func(t *testing.T, _ PhoneNumber, err error) {
				var api *APIError
				if !errors.As(err, &api) || api.Code != 190 || Classify(err) != ClassAccountFatal {
					t.Errorf("err = %v, want an account-fatal APIError 190", err)
				}
				if strings.Contains(err.Error(), testToken) {
					t.Errorf("the token leaked into %q", err)
				}
			}, true},
		{"an answer for another id", 200, `{"id":"999"}`,
			func(t *testing.T, _ PhoneNumber, err error) {
				var tr *TransportError
				if !errors.As(err, &tr) {
					t.Errorf("err = %v, want a TransportError", err)
				}
			}, true},
		{"not the Graph API", 404, `<html>not found</html>`,
			func(t *testing.T, _ PhoneNumber, err error) {
				var api *APIError
				if !errors.As(err, &api) || !api.NoBody {
					t.Errorf("err = %v, want an APIError without a Graph body", err)
				}
			}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := newCaptureServer(t, tt.status, tt.answer)
			c := New(Config{BaseURL: srv.URL})
			p, err := c.PhoneNumber(t.Context(), id, testToken)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			tt.check(t, p, err)
			req := <-got
			if req.method != "GET" || req.path != "/"+DefaultVersion+"/"+id || req.auth != "Bearer "+testToken {
				t.Errorf("request %s %s auth %q", req.method, req.path, req.auth)
			}
		})
	}

	t.Run("closed port", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = New(Config{BaseURL: "http://" + addr}).PhoneNumber(t.Context(), id, testToken)
		var tr *TransportError
		if !errors.As(err, &tr) {
			t.Errorf("err = %v, want a TransportError", err)
		}
	})
	t.Run("no token", func(t *testing.T) {
		if _, err := New(Config{}).PhoneNumber(t.Context(), id, ""); !errors.Is(err, ErrNoCredentials) {
			t.Errorf("err = %v, want ErrNoCredentials", err)
		}
	})
}
