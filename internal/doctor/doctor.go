// Package doctor checks a wasend set-up end to end — the database, each
// account's number and token, its WABA's webhooks and templates, the
// webhook receiver, the shared limits' Redis, the API version, the quota
// day and each WABA's Marketing Messages API onboarding — and says for each finding that fails or warns why it
// matters and the command that fixes it. It reads through narrow
// interfaces only; runner builds them from the real parts.
package doctor

import (
	"context"
	"net/http"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/whatsapp"
)

// Level is how a finding stands.
type Level string

const (
	OK   Level = "ok"
	Warn Level = "warn" // works, but something will go wrong or is unknown
	Fail Level = "fail" // sending, or hearing back, does not work as set up
)

// Finding is one check's result. Details and Fix are given for a warning
// or a failure only.
type Finding struct {
	// Check names what was checked: "database", "account main-01", …
	Check   string `json:"check"`
	Level   Level  `json:"level"`
	Summary string `json:"summary"`
	// Details say what is wrong, why it matters, and what to do when no
	// command does it.
	Details []string `json:"details,omitempty"`
	// Fix is a command line that fixes it, as it can be pasted.
	Fix string `json:"fix,omitempty"`
}

// Report is every finding in the order checked, and the verdict.
type Report struct {
	Findings []Finding `json:"findings"`
	Failures int       `json:"failures"`
	Warnings int       `json:"warnings"`
	Verdict  string    `json:"verdict"`
}

// Failed reports whether any check failed (exit 1).
func (r Report) Failed() bool { return r.Failures > 0 }

// Database is what the checks read of wasend's database.
type Database interface {
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
	Templates(ctx context.Context) ([]campaign.Template, error)
	// MarketingStatuses are the WABAs' Marketing Messages API onboarding
	// statuses as template sync last read them, by WABA id.
	MarketingStatuses(ctx context.Context) (map[string]string, error)
}

// Graph is the Cloud API reads the checks make; *whatsapp.Client is one.
type Graph interface {
	PhoneNumber(ctx context.Context, phoneNumberID, token string) (whatsapp.PhoneNumber, error)
	SubscribedApps(ctx context.Context, wabaID, token string) ([]whatsapp.SubscribedApp, error)
}

// Clock is the shared limits' Redis: its clock, and the URL it is shown by
// (password redacted).
type Clock interface {
	Time(ctx context.Context) (time.Time, error)
	String() string
}

// Config is what to check. Zero values mean "not configured": a check of
// something not configured is left out or warns, as its text says.
type Config struct {
	// DatabasePath is the database file; Database is nil when it could
	// not be opened, and DatabaseErr says why.
	DatabasePath string
	Database     Database
	DatabaseErr  error
	// Zone is the zone of quota days fixed in the database; ZoneErr is a
	// WASEND_TZ that disagrees with it (no quota day opens then).
	Zone      *time.Location
	ZoneErr   error
	ZoneAsked string // WASEND_TZ, when ZoneErr

	// Graph is the Cloud API at BaseURL, version Version; Token reads an
	// account's token from its variable.
	Graph   Graph
	BaseURL string
	Version string
	Token   func(env string) (string, error)
	// NumberInfo reads the figures wasend paces a number by from what
	// the API said of it (runner.NumberInfo).
	NumberInfo func(whatsapp.PhoneNumber) (campaign.NumberInfo, error)
	// Sandbox: the API is the built-in sandbox (the API version and the
	// webhook secrets matter less: said, not failed).
	Sandbox bool

	// AppSecret and VerifyToken are the webhook secrets as set ("" when
	// not); never printed.
	AppSecret, VerifyToken string
	// WebhookURL is the receiver's public URL (doctor --webhook-url);
	// HTTP posts the signed test body there.
	WebhookURL string
	HTTP       *http.Client

	// Limits is the shared limits' Redis under --limits; LimitsErr says
	// why it could not be dialed.
	Limits    Clock
	LimitsErr error

	// Now is the host's clock.
	Now func() time.Time
	// Flags are the global flags as given, each with its leading space
	// (hint.Flags): every fix ends with them, so it runs when pasted.
	Flags string
}

// Run makes every check and returns the report.
func Run(ctx context.Context, c Config) Report {
	if c.Now == nil {
		c.Now = time.Now
	}
	var r Report
	add := func(fs ...Finding) { r.Findings = append(r.Findings, fs...) }

	accts, templates := checkDatabase(ctx, c, add)
	if c.Database != nil {
		numbers := checkAccounts(ctx, c, accts, add)
		checkWABAs(ctx, c, accts, numbers, templates, add)
		add(checkQuotaDay(c, accts))
	}
	add(checkWebhookSecrets(c)...)
	if c.WebhookURL != "" {
		add(checkWebhookURL(ctx, c))
	}
	if c.Limits != nil || c.LimitsErr != nil {
		add(checkRedis(ctx, c))
	}
	add(checkAPIVersion(c))

	for _, f := range r.Findings {
		switch f.Level {
		case Fail:
			r.Failures++
		case Warn:
			r.Warnings++
		}
	}
	r.Verdict = verdict(len(r.Findings), r.Failures, r.Warnings)
	return r
}
