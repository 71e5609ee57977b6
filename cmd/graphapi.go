package cmd

import (
	"context"

	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
)

// apiConfig is where Graph calls go: $WASEND_API_BASE (version
// $WASEND_API_VERSION) with each account's own token, or the sandbox.
func (f *Factory) apiConfig() runner.APIConfig {
	return runner.APIConfig{BaseURL: f.Getenv("WASEND_API_BASE"), Version: f.Getenv("WASEND_API_VERSION"), Token: f.Token, Sandbox: f.Sandbox}
}

// graphAPI opens the API f's flags and environment choose (runner.OpenAPI);
// under --sandbox a sandbox is served with opts. Close stops it.
func (f *Factory) graphAPI(ctx context.Context, st driver.Driver, opts sandbox.Options) (*runner.API, error) {
	return runner.OpenAPI(ctx, st, f.apiConfig(), opts)
}
