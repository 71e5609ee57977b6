package runner

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

func TestCheckAccounts(t *testing.T) {
	box := httptest.NewServer(sandbox.New(sandbox.Options{Faults: sandbox.Faults{
		UnknownNumbers: []string{"100000000000009"}, BadTokens: []string{"revoked"},
	}}))
	t.Cleanup(box.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>bad gateway</html>")
	}))
	t.Cleanup(down.Close)
	// A proxy in front of the API that knows no route for one number: an
	// HTML 404, no Graph error, for it alone.
	boxHandler := box.Config.Handler
	proxied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/100000000000004") {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html>404 Not Found</html>")
			return
		}
		boxHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(proxied.Close)
	nowhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html>404 Not Found</html>")
	}))
	t.Cleanup(nowhere.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()

	good := campaign.Account{Name: "good", PhoneNumberID: "100000000000001", TokenEnv: "OK"}
	unknown := campaign.Account{Name: "unknown", PhoneNumberID: "100000000000009", TokenEnv: "OK"}
	revoked := campaign.Account{Name: "revoked", PhoneNumberID: "100000000000002", TokenEnv: "REVOKED"}
	unset := campaign.Account{Name: "unset", PhoneNumberID: "100000000000003", TokenEnv: "UNSET"}
	unrouted := campaign.Account{Name: "unrouted", PhoneNumberID: "100000000000004", TokenEnv: "OK"}
	token := func(env string) (string, error) {
		switch env {
		case "OK":
			return "good-token", nil
		case "REVOKED":
			return "revoked", nil
		}
		return "", fmt.Errorf("$%s is not set", env)
	}
	tests := []struct {
		name    string
		base    string
		accts   []campaign.Account
		want    []Verdict
		wantErr string // "" when the run may go on
	}{
		{"all pass", box.URL, []campaign.Account{good}, []Verdict{VerdictOK}, ""},
		{"bad ones left out", box.URL, []campaign.Account{good, unknown, revoked, unset},
			[]Verdict{VerdictOK, VerdictFailed, VerdictFailed, VerdictFailed}, ""},
		{"none passes", box.URL, []campaign.Account{unknown, revoked}, []Verdict{VerdictFailed, VerdictFailed}, "no account passed the check"},
		{"closed port", closed, []campaign.Account{good, unknown}, []Verdict{VerdictUnreached, VerdictUnreached}, "cannot reach the Cloud API"},
		{"not the Graph API", down.URL, []campaign.Account{good}, []Verdict{VerdictUnreached}, "cannot reach the Cloud API"},
		// A non-Graph 404 for one number while the others answer is that
		// account's configuration: left out, not waited out as an outage.
		{"non-Graph 404 for one number", proxied.URL, []campaign.Account{good, unrouted}, []Verdict{VerdictOK, VerdictFailed}, ""},
		// For every number it is the base URL.
		{"non-Graph 404 for all", nowhere.URL, []campaign.Account{good, unrouted}, []Verdict{VerdictFailed, VerdictFailed}, "cannot reach the Cloud API"},
		{"not a URL", "notaurl", []campaign.Account{good}, nil, `"notaurl" is not a URL`},
		{"no host", "http://", []campaign.Account{good}, nil, "is not a URL"},
		{"no account", box.URL, nil, nil, "no enabled account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := whatsapp.New(whatsapp.Config{BaseURL: tt.base, Timeout: 5 * time.Second})
			checks, err := CheckAccounts(t.Context(), client, tt.base, tt.accts, token)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantErr != "" && (!errors.Is(err, ErrPreflight) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want ErrPreflight saying %q", err, tt.wantErr)
			}
			// No usable account exits as every account failing in a run does (5).
			if noAccount := errors.Is(err, campaign.ErrNoUsableAccount); noAccount != (tt.name == "none passes") {
				t.Errorf("err = %v: ErrNoUsableAccount %v", err, noAccount)
			}
			if len(checks) != len(tt.want) {
				t.Fatalf("%d checks, want %d", len(checks), len(tt.want))
			}
			for i, c := range checks {
				if c.Verdict != tt.want[i] {
					t.Errorf("account %s: %s (%v), want %s", c.Account.Name, c.Verdict, c.Err, tt.want[i])
				}
				if c.Err != nil && strings.Contains(c.Err.Error(), "good-token") {
					t.Errorf("account %s: the token leaked into %q", c.Account.Name, c.Err)
				}
			}
		})
	}
}

// TestApplyChecks: a failed account is dropped from the campaign as an
// account-fatal answer would drop it; once it passes it is taken back, and
// a drop for another reason stays until `campaign resume`.
func TestApplyChecks(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "w.db"), driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var accts []campaign.Account
	for i, name := range []string{"a", "b"} {
		a, err := st.AddAccount(ctx, campaign.Account{Name: name, PhoneNumberID: fmt.Sprint(100 + i), Tier: campaign.TierNew, TokenEnv: "T"})
		if err != nil {
			t.Fatal(err)
		}
		accts = append(accts, a)
	}
	c, _, err := ImportWith(ctx, st, strings.NewReader("phone\n+4915112345678\n"), "x.csv",
		campaign.Campaign{Name: "x", Fingerprint: "x", Spec: campaign.Spec{Kind: campaign.KindText, Text: "hi"}}, ReadOptions{IgnoreWindow: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	failed := []AccountCheck{
		{Account: accts[0], Verdict: VerdictFailed, Code: 190, Err: errors.New("graph error 190")},
		{Account: accts[1], Verdict: VerdictOK},
	}
	if _, err := ApplyChecks(ctx, st, c.ID, failed, now); err != nil {
		t.Fatal(err)
	}
	dropped, err := readmodel.New(st).DroppedAccounts(ctx, c.ID)
	if err != nil || len(dropped) != 1 || dropped[0].Account != "a" || dropped[0].ErrorCode != 190 || !strings.HasPrefix(dropped[0].Reason, PreflightReason) {
		t.Fatalf("dropped %+v, %v; want a with code 190 and the preflight reason", dropped, err)
	}
	// b dropped by an answer during a run: a passing check doesn't undo that.
	if err := st.DropAccount(ctx, c.ID, accts[1].ID, "graph error 131031", 131031, now); err != nil {
		t.Fatal(err)
	}
	passed := []AccountCheck{{Account: accts[0], Verdict: VerdictOK}, {Account: accts[1], Verdict: VerdictOK}}
	back, err := ApplyChecks(ctx, st, c.ID, passed, now)
	if err != nil || len(back) != 1 || back[0] != "a" {
		t.Fatalf("taken back %v, %v; want [a]", back, err)
	}
	dropped, _ = readmodel.New(st).DroppedAccounts(ctx, c.ID)
	if len(dropped) != 1 || dropped[0].Account != "b" {
		t.Errorf("dropped after the second check: %+v, want only b", dropped)
	}
}
