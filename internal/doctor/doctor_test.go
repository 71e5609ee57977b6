package doctor_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/doctor"
	"github.com/wasend/wasend/internal/hostshare"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/webhook"
	"github.com/wasend/wasend/internal/whatsapp"
)

// setup is a set-up where every check passes, on real parts: a SQLite
// database with two accounts of one WABA, read and synced; a sandbox Cloud
// API; the webhook receiver on that database; Redis when installed.
type setup struct {
	cfg    doctor.Config
	st     *store.Store
	box    *sandbox.Server
	tokens map[string]string
	now    time.Time
}

func newSetup(t *testing.T, faults sandbox.Faults, redis bool) *setup {
	t.Helper()
	ctx := t.Context()
	now := time.Now()
	s := &setup{now: now, tokens: map[string]string{"T1": "token-1", "T2": "token-2"}}
	db := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(ctx, db, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.st = st
	s.box = sandbox.New(sandbox.Options{Faults: faults})
	api := httptest.NewServer(s.box)
	t.Cleanup(api.Close)
	client := whatsapp.New(whatsapp.Config{BaseURL: api.URL, Timeout: 5 * time.Second})
	for _, a := range []campaign.Account{
		{Name: "a1", PhoneNumberID: "1001", Tier: campaign.TierActive, TokenEnv: "T1", WABA: "900"},
		{Name: "a2", PhoneNumberID: "1002", Tier: campaign.TierNew, TokenEnv: "T2", WABA: "900"},
	} {
		if _, err := st.AddAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		// As account sync records the sandbox's defaults.
		info := campaign.NumberInfo{QualityRating: "GREEN", Throughput: campaign.DefaultThroughput, MessagingLimit: campaign.Unlimited,
			NameStatus: "APPROVED", At: now}
		if _, err := st.RecordSync(ctx, a.Name, info); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.ReplaceTemplates(ctx, "900", []campaign.Template{
		{Name: "spring_sale", Language: "en_US", Status: "APPROVED", Category: "MARKETING", Components: "[]", SyncedAt: now.Add(-time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordMarketingStatus(ctx, "900", "ONBOARDED", now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}

	rctx, cancel := context.WithCancel(context.Background())
	recv := webhook.NewReceiver(webhook.ReceiverConfig{Inbox: st, AppSecret: []byte("app-secret"), VerifyToken: "verify-token"})
	done := make(chan struct{})
	go func() { recv.Run(rctx); close(done) }()
	hooks := httptest.NewServer(recv)
	t.Cleanup(func() { hooks.Close(); cancel(); <-done })

	s.cfg = doctor.Config{
		DatabasePath: db, Database: dbReader{st}, Zone: st.Location(),
		Graph: client, BaseURL: api.URL,
		Token: func(env string) (string, error) {
			if v := s.tokens[env]; v != "" {
				return v, nil
			}
			return "", errors.New("environment variable " + env + " is not set")
		},
		NumberInfo: func(p whatsapp.PhoneNumber) (campaign.NumberInfo, error) { return runner.NumberInfo(p, now) },
		AppSecret:  "app-secret", VerifyToken: "verify-token", WebhookURL: hooks.URL,
		Now:   func() time.Time { return s.now },
		Flags: " --db " + db,
	}
	if redis {
		srv := redistest.Start(t)
		lim, err := hostshare.OpenLimits(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lim.Close() })
		s.cfg.Limits = lim
		// The host's clock is the real one here: Redis's is compared with it.
		s.cfg.Now = time.Now
	}
	return s
}

type dbReader struct{ st *store.Store }

func (d dbReader) Accounts(ctx context.Context) ([]campaign.AccountStatus, error) {
	return d.st.Accounts(ctx)
}

func (d dbReader) Templates(ctx context.Context) ([]campaign.Template, error) {
	return readmodel.New(d.st).Templates(ctx)
}

func (d dbReader) MarketingStatuses(ctx context.Context) (map[string]string, error) {
	return readmodel.New(d.st).MarketingStatuses(ctx)
}

// neverRead is a database where template sync never read an onboarding.
type neverRead struct{ dbReader }

func (neverRead) MarketingStatuses(context.Context) (map[string]string, error) {
	return map[string]string{}, nil
}

func TestHealthy(t *testing.T) {
	s := newSetup(t, sandbox.Faults{}, true)
	rep := doctor.Run(t.Context(), s.cfg)
	for _, f := range rep.Findings {
		if f.Level != doctor.OK {
			t.Errorf("%s: %s %s %q, want ok", f.Check, f.Level, f.Summary, f.Details)
		}
	}
	checks := map[string]bool{}
	for _, f := range rep.Findings {
		checks[f.Check] = true
	}
	for _, want := range []string{"database", "account a1", "account a2", "WABA webhooks", "WABA templates", "WABA marketing API", "quota day",
		"webhook secrets", "webhook receiver", "shared limits", "API version"} {
		if !checks[want] {
			t.Errorf("no %q check in %v", want, checks)
		}
	}
	if rep.Failed() || rep.Warnings != 0 || rep.Verdict != "ready to send: all 11 checks passed" {
		t.Errorf("verdict %q, failures %d, warnings %d", rep.Verdict, rep.Failures, rep.Warnings)
	}
}

// TestFindings breaks one thing at a time and wants the finding that says
// so, at its level, with the fix when there is a command for it.
func TestFindings(t *testing.T) {
	for _, tt := range []struct {
		name   string
		faults sandbox.Faults
		redis  bool
		breaks func(s *setup)
		check  string
		level  doctor.Level
		detail string // in the details
		fix    string // in the fix
		// summary, when set, is in the finding's line
		summary string
	}{
		{name: "token variable unset", breaks: func(s *setup) { delete(s.tokens, "T2") },
			check: "account a2", level: doctor.Fail, detail: "T2 is not set"},
		{name: "token refused", faults: sandbox.Faults{BadTokens: []string{"token-2"}},
			check: "account a2", level: doctor.Fail, detail: "the token in $T2 is invalid or expired"},
		{name: "number unknown", faults: sandbox.Faults{UnknownNumbers: []string{"1002"}},
			check: "account a2", level: doctor.Fail, detail: "the phone number id 1002 is not known for the token in $T2"},
		{name: "API unreachable", breaks: func(s *setup) {
			s.cfg.Graph = whatsapp.New(whatsapp.Config{BaseURL: "http://127.0.0.1:1", Timeout: time.Second})
		},
			check: "account a1", level: doctor.Fail, detail: "did not answer"},
		{name: "messaging limit unread", faults: sandbox.Faults{Numbers: map[string]sandbox.Number{"1001": {MessagingLimit: "-"}}},
			check: "account a1", level: doctor.Fail, detail: "the messaging limit could not be read"},
		{name: "quality yellow", faults: sandbox.Faults{Numbers: map[string]sandbox.Number{"1002": {QualityRating: "YELLOW"}}},
			check: "account a2", level: doctor.Warn, detail: "quality YELLOW"},
		{name: "no WABA id", breaks: func(s *setup) {
			if _, err := s.st.AddAccount(context.Background(), campaign.Account{Name: "a3", PhoneNumberID: "1003", Tier: campaign.TierNew, TokenEnv: "T1"}); err != nil {
				panic(err)
			}
		}, check: "account a3", level: doctor.Warn, detail: "give it one with wasend account set and --waba-id"},
		{name: "no app subscribed", breaks: func(s *setup) { s.box.SetSubscribed("900", false) },
			check: "WABA webhooks", level: doctor.Fail, detail: "no status or reply webhook", fix: `curl -X POST -H "Authorization: Bearer $T1" `},
		{name: "no templates synced", breaks: func(s *setup) { s.st.ReplaceTemplates(context.Background(), "900", nil) },
			check: "WABA templates", level: doctor.Warn, detail: "cannot be checked", fix: "wasend template sync --db "},
		{name: "no template approved", breaks: func(s *setup) {
			s.st.ReplaceTemplates(context.Background(), "900", []campaign.Template{{Name: "x", Language: "en", Status: "PAUSED", Components: "[]", SyncedAt: s.now}})
		}, check: "WABA templates", level: doctor.Fail, detail: "no approved template", fix: "wasend template sync"},
		{name: "templates synced long ago", breaks: func(s *setup) { s.now = s.now.Add(8 * 24 * time.Hour) },
			check: "WABA templates", level: doctor.Warn, detail: "synced more than 7 days ago", fix: "wasend template sync"},
		{name: "WABA not onboarded", breaks: func(s *setup) {
			if err := s.st.RecordMarketingStatus(context.Background(), "900", "PENDING", s.now); err != nil {
				panic(err)
			}
		}, check: "WABA marketing API", level: doctor.Warn, detail: "Meta refuses from a WABA not onboarded", fix: "wasend template sync --db ",
			summary: "900: not onboarded (PENDING)"},
		{name: "onboarding never read", breaks: func(s *setup) { s.cfg.Database = neverRead{s.cfg.Database.(dbReader)} },
			check: "WABA marketing API", level: doctor.Warn, detail: "--api auto sends them through /messages", fix: "wasend template sync --db ",
			summary: "900: onboarding not read"},
		{name: "quota reset did not run", breaks: func(s *setup) { s.now = s.now.Add(48 * time.Hour) },
			check: "quota day", level: doctor.Warn, detail: "the quota reset did not run", fix: "wasend quota reset --db "},
		{name: "secrets unset", breaks: func(s *setup) { s.cfg.AppSecret, s.cfg.VerifyToken, s.cfg.WebhookURL = "", "", "" },
			check: "webhook secrets", level: doctor.Warn, detail: "WASEND_VERIFY_TOKEN is not set"},
		{name: "another app secret", breaks: func(s *setup) { s.cfg.AppSecret = "not-the-receivers" },
			check: "webhook receiver", level: doctor.Fail, detail: "the receiver's WASEND_APP_SECRET differs", summary: ": not a working receiver"},
		{name: "another verify token", breaks: func(s *setup) { s.cfg.VerifyToken = "not-the-receivers" },
			check: "webhook receiver", level: doctor.Fail, detail: "the receiver's WASEND_VERIFY_TOKEN differs"},
		{name: "receiver not there", breaks: func(s *setup) { s.cfg.WebhookURL = "http://127.0.0.1:1/hooks" },
			check: "webhook receiver", level: doctor.Fail, detail: "the signed test post failed"},
		{name: "API version ended", breaks: func(s *setup) { s.cfg.Version = "v20.0" },
			check: "API version", level: doctor.Fail, detail: "set WASEND_API_VERSION to a newer version"},
		{name: "API version ends soon", breaks: func(s *setup) {
			s.cfg.Version = "v22.0"
			s.now = time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC)
		}, check: "API version", level: doctor.Warn, detail: "50 days left"},
		{name: "API version unknown", breaks: func(s *setup) { s.cfg.Version = "v99.0" },
			check: "API version", level: doctor.Warn, detail: "its end date is unknown"},
		{name: "database not opened", breaks: func(s *setup) { s.cfg.Database, s.cfg.DatabaseErr = nil, errors.New("database x.db does not exist") },
			check: "database", level: doctor.Fail, detail: "x.db does not exist"},
		{name: "zone asked differs", breaks: func(s *setup) {
			s.cfg.ZoneErr, s.cfg.ZoneAsked = &campaign.ZoneMismatchError{Requested: "Europe/Berlin", Stored: "UTC"}, "Europe/Berlin"
		}, check: "database", level: doctor.Warn, detail: "quota reset refuses", fix: "wasend config set timezone Europe/Berlin --db "},
		{name: "no account", breaks: func(s *setup) {
			for _, n := range []string{"a1", "a2"} {
				if _, err := s.st.UpdateAccount(context.Background(), n, campaign.AccountChange{Disabled: ptr(true)}); err != nil {
					panic(err)
				}
			}
		}, check: "accounts", level: doctor.Fail, detail: "add a number with wasend account add"},
		{name: "Redis clock off", redis: true, breaks: func(s *setup) { s.cfg.Now = func() time.Time { return time.Now().Add(3 * time.Second) } },
			check: "shared limits", level: doctor.Fail, detail: "synchronise both clocks"},
		{name: "Redis down", redis: true, breaks: func(s *setup) { s.cfg.Limits.(*hostshare.Limits).Close() },
			check: "shared limits", level: doctor.Fail, detail: "claim nothing until it does"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, tt.faults, tt.redis)
			if tt.breaks != nil {
				tt.breaks(s)
			}
			rep := doctor.Run(t.Context(), s.cfg)
			var got *doctor.Finding
			for i, f := range rep.Findings {
				if f.Check == tt.check && f.Level != doctor.OK {
					got = &rep.Findings[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s finding for %s; report:\n%s", tt.level, tt.check, text(rep))
			}
			if got.Level != tt.level || !strings.Contains(strings.Join(got.Details, "\n"), tt.detail) || !strings.Contains(got.Fix, tt.fix) {
				t.Errorf("%s: %s %q fix %q, want %s with %q and fix %q", tt.check, got.Level, got.Details, got.Fix, tt.level, tt.detail, tt.fix)
			}
			if !strings.Contains(got.Summary, tt.summary) {
				t.Errorf("%s: summary %q, want it to say %q", tt.check, got.Summary, tt.summary)
			}
			if (tt.level == doctor.Fail) != rep.Failed() {
				t.Errorf("Failed() = %v with a %s finding", rep.Failed(), tt.level)
			}
			if strings.Contains(text(rep), "token-1") || strings.Contains(text(rep), "app-secret") {
				t.Errorf("a secret is in the report:\n%s", text(rep))
			}
		})
	}
}

// A WABA with no approved marketing template has nothing to send through
// the Marketing Messages API: not onboarded, or never read, is said, not
// warned about.
func TestMarketingNotNeeded(t *testing.T) {
	for _, tt := range []struct {
		name, status string
		read         bool
		summary      string
	}{
		{"not onboarded", "", true, "900: not onboarded, no marketing template"},
		{"never read", "", false, "900: not read, no marketing template"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, sandbox.Faults{}, false)
			ctx := t.Context()
			if err := s.st.ReplaceTemplates(ctx, "900", []campaign.Template{
				{Name: "receipt", Language: "en_US", Status: "APPROVED", Category: "UTILITY", Components: "[]", SyncedAt: s.now},
				{Name: "spring_sale", Language: "en_US", Status: "PAUSED", Category: "MARKETING", Components: "[]", SyncedAt: s.now},
			}); err != nil {
				t.Fatal(err)
			}
			if err := s.st.RecordMarketingStatus(ctx, "900", tt.status, s.now); err != nil {
				t.Fatal(err)
			}
			if !tt.read {
				s.cfg.Database = neverRead{s.cfg.Database.(dbReader)}
			}
			rep := doctor.Run(ctx, s.cfg)
			for _, f := range rep.Findings {
				if f.Check == "WABA marketing API" {
					if f.Level != doctor.OK || f.Summary != tt.summary {
						t.Errorf("%s %q, want ok %q", f.Level, f.Summary, tt.summary)
					}
					return
				}
			}
			t.Fatalf("no marketing check:\n%s", text(rep))
		})
	}
}

func ptr[T any](v T) *T { return &v }

func text(r doctor.Report) string {
	var b strings.Builder
	r.Write(&b, 0, false)
	return b.String()
}
