package runner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/ui"
	"github.com/wasend/wasend/internal/whatsapp"
)

// numberReader answers PhoneNumber and records the ids it was asked.
type numberReader struct{ asked []string }

func (r *numberReader) PhoneNumber(_ context.Context, id, token string) (whatsapp.PhoneNumber, error) {
	r.asked = append(r.asked, id+":"+token)
	return whatsapp.PhoneNumber{}, nil
}

// TestOutageProbe: the probe reads the first account the preflight let
// send, with its token; without one there is no probe.
func TestOutageProbe(t *testing.T) {
	failed := AccountCheck{Account: campaign.Account{Name: "a", PhoneNumberID: "1", TokenEnv: "A"}, Verdict: VerdictFailed}
	throttled := AccountCheck{Account: campaign.Account{Name: "b", PhoneNumberID: "2", TokenEnv: "B"}, Verdict: VerdictThrottled}
	ok := AccountCheck{Account: campaign.Account{Name: "c", PhoneNumberID: "3", TokenEnv: "C"}, Verdict: VerdictOK}
	token := func(env string) (string, error) { return "tok-" + env, nil }
	tests := []struct {
		name   string
		checks []AccountCheck
		want   string // "": no probe
	}{
		{name: "none passed", checks: []AccountCheck{failed}},
		{name: "first usable, throttled or not", checks: []AccountCheck{failed, throttled, ok}, want: "2:tok-B"},
		{name: "ok", checks: []AccountCheck{ok, throttled}, want: "3:tok-C"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &numberReader{}
			probe := outageProbe(r, tc.checks, token)
			if tc.want == "" {
				if probe != nil {
					t.Fatal("a probe without a usable account")
				}
				return
			}
			if err := probe(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(r.asked) != 1 || r.asked[0] != tc.want {
				t.Errorf("asked %q, want %q", r.asked, tc.want)
			}
		})
	}
	gone := errors.New("variable unset")
	probe := outageProbe(&numberReader{}, []AccountCheck{ok}, func(string) (string, error) { return "", gone })
	if err := probe(context.Background()); !errors.Is(err, gone) {
		t.Errorf("token error: %v, want %v", err, gone)
	}
}

// TestReportPrepared: what Run says of the campaign Prepare found or made.
func TestReportPrepared(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c := campaign.Campaign{ID: 3, Name: "promo", Source: "promo.csv", Imported: 40, Skipped: 2, CreatedAt: at, FinishedAt: at}
	skips := []campaign.Skip{{Line: 7, Input: "", Reason: "no number"}}
	tests := []struct {
		name string
		res  Result
		want []string
		not  []string
	}{
		{name: "imported", res: Result{Campaign: c, Imported: true, Skipped: skips, Elsewhere: 5},
			want: []string{`campaign 3 "promo": imported 40 recipients from promo.csv, skipped 2; 5 rows are other shards'`,
				`  line 7: "": no number`, "  … and 1 more (see `wasend campaign skipped 3 --db x.db`)"}},
		{name: "imported, named after its file", res: Result{Campaign: campaign.Campaign{ID: 4, Name: "promo.csv",
			Source: "/srv/lists/promo.csv", Imported: 40}, Imported: true},
			want: []string{`campaign 4 "promo.csv": imported 40 recipients, skipped 0`}, not: []string{"/srv/lists"}},
		{name: "continued", res: Result{Campaign: c, Continued: true, Added: 1, Already: 39},
			want: []string{`continuing campaign 3 "promo": 1 new recipient added, 39 already there, skipped 2`}},
		{name: "imported from a mobile column", res: Result{Campaign: c, Imported: true,
			Phone: recipients.PhoneColumn{Name: "Mobile Phone", Unused: []string{"Phone"}}},
			want: []string{`phone column: "Mobile Phone" (also phone-like, not used: "Phone")` + "\n" +
				`campaign 3 "promo": imported 40 recipients from promo.csv, skipped 2`}},
		{name: "continued from a named column", res: Result{Campaign: c, Continued: true, Added: 1, Already: 39,
			Phone: recipients.PhoneColumn{Name: "Handy", Named: true}},
			want: []string{`phone column: "Handy" (named with --phone-column)` + "\n" + `continuing campaign 3 "promo"`}},
		{name: "repeat", res: Result{Campaign: c, Repeat: true},
			want: []string{"already sent this message to these recipients (finished 2026-03-02 10:00)", "add --again"},
			// A new --name alone skips every row (sent within 24 h): not offered.
			not: []string{"--name"}},
		{name: "resumed", res: Result{Campaign: c}, want: []string{`continuing campaign 3 "promo" (imported 2026-03-02 10:00)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			ReportPrepared(ui.Test(&bytes.Buffer{}, &errOut), tc.res, " --db x.db", time.UTC)
			for _, w := range tc.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("missing %q in:\n%s", w, errOut.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(errOut.String(), w) {
					t.Errorf("%q in:\n%s", w, errOut.String())
				}
			}
		})
	}
}
