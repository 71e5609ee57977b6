package runner

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// APIConfig says where Graph calls go, as the command line and the
// environment chose.
type APIConfig struct {
	// BaseURL and Version are $WASEND_API_BASE and $WASEND_API_VERSION
	// ("": the client's defaults).
	BaseURL, Version string
	// Token reads an account's token from its variable.
	Token func(env string) (string, error)
	// Sandbox (--sandbox): the calls go to a sandbox served for the
	// command, with a stand-in token.
	Sandbox bool
}

// API is where a command's Graph calls go, and with which tokens.
type API struct {
	BaseURL, Version string
	// Token reads an account's token from its variable; under --sandbox
	// it is SandboxToken whatever the variable holds.
	Token func(env string) (string, error)
	// Sandbox: the calls go to a sandbox this process serves.
	Sandbox bool
	stop    func()
}

// OpenAPI is the one place that chooses where Graph calls go: the Cloud
// API at cfg.BaseURL with each account's own token or, under cfg.Sandbox,
// a sandbox served on a loopback port for this command with opts, with a
// stand-in token — nothing goes to cfg.BaseURL then, and the sandbox
// database gets its demo accounts. Close stops the sandbox.
func OpenAPI(ctx context.Context, st driver.Driver, cfg APIConfig, opts sandbox.Options) (*API, error) {
	api := &API{BaseURL: cfg.BaseURL, Version: cfg.Version, Token: cfg.Token, stop: func() {}}
	if !cfg.Sandbox {
		return api, nil
	}
	if err := EnsureDemoAccounts(ctx, st); err != nil {
		return nil, err
	}
	url, stop, err := StartSandbox(ctx, opts)
	if err != nil {
		return nil, err
	}
	api.BaseURL, api.stop, api.Sandbox = url, stop, true
	api.Token = func(string) (string, error) { return SandboxToken, nil }
	return api, nil
}

// Client is a Cloud API client for the chosen API.
func (a *API) Client(timeout time.Duration) *whatsapp.Client {
	return whatsapp.New(whatsapp.Config{BaseURL: a.BaseURL, Version: a.Version, Timeout: timeout})
}

// Close stops the sandbox, if one was started; calling it again does
// nothing.
func (a *API) Close() { a.stop() }

// APIVersionWarning is the line every command prints once when the
// configured Graph API version (WASEND_API_VERSION, "" for wasend's) has
// ended or ends within 90 days; "" otherwise (whatsapp.VersionEndWarning).
func APIVersionWarning(version string, now time.Time) string {
	return whatsapp.VersionEndWarning(version, now)
}
