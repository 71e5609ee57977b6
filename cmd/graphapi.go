package cmd

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/whatsapp"
)

// graphAPI is where a command's Graph calls go, and with which tokens.
type graphAPI struct {
	BaseURL, Version string
	// Token reads an account's token from its variable; under --sandbox
	// it is runner.SandboxToken whatever the variable holds.
	Token func(env string) (string, error)
	// Sandbox: the calls go to a sandbox this process serves.
	Sandbox bool
	stop    func()
}

// graphAPI is the one place that chooses where Graph calls go: the Cloud
// API at $WASEND_API_BASE (version $WASEND_API_VERSION) with each account's
// own token or, under --sandbox, a sandbox served on a loopback port for
// this command with opts, with a stand-in token — nothing goes to
// $WASEND_API_BASE then, and the sandbox database gets its demo accounts.
// Close stops the sandbox.
func (f *Factory) graphAPI(ctx context.Context, st *store.Store, opts sandbox.Options) (*graphAPI, error) {
	api := &graphAPI{BaseURL: f.Getenv("WASEND_API_BASE"), Version: f.Getenv("WASEND_API_VERSION"), Token: f.Token, stop: func() {}}
	if !f.Sandbox {
		return api, nil
	}
	if err := runner.EnsureDemoAccounts(ctx, st); err != nil {
		return nil, err
	}
	url, stop, err := runner.StartSandbox(ctx, opts)
	if err != nil {
		return nil, err
	}
	api.BaseURL, api.stop, api.Sandbox = url, stop, true
	api.Token = func(string) (string, error) { return runner.SandboxToken, nil }
	return api, nil
}

// Client is a Cloud API client for the chosen API.
func (g *graphAPI) Client(timeout time.Duration) *whatsapp.Client {
	return whatsapp.New(whatsapp.Config{BaseURL: g.BaseURL, Version: g.Version, Timeout: timeout})
}

// Close stops the sandbox, if one was started; calling it again does
// nothing.
func (g *graphAPI) Close() { g.stop() }
