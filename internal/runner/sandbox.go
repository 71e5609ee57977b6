package runner

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
)

// SandboxTokenEnv is the token variable of the demo accounts; the sandbox
// accepts any token, so none needs to be set.
const SandboxTokenEnv = "WASEND_SANDBOX_TOKEN"

// DemoAccounts are created in the sandbox database, one per tier.
var DemoAccounts = []campaign.Account{
	{Name: "sandbox-new", PhoneNumberID: "100000000000001", Tier: campaign.TierNew, TokenEnv: SandboxTokenEnv},
	{Name: "sandbox-warm", PhoneNumberID: "100000000000002", Tier: campaign.TierWarm, TokenEnv: SandboxTokenEnv},
	{Name: "sandbox-active", PhoneNumberID: "100000000000003", Tier: campaign.TierActive, TokenEnv: SandboxTokenEnv},
}

// EnsureDemoAccounts adds the demo accounts that are missing.
func EnsureDemoAccounts(ctx context.Context, st *store.Store) error {
	for _, a := range DemoAccounts {
		if _, err := st.AddAccount(ctx, a); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	}
	return nil
}

// StartSandbox serves the Cloud API stand-in on a free loopback port until
// ctx ends or stop is called. It returns the base URL to send to.
func StartSandbox(ctx context.Context, opts sandbox.Options) (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start sandbox: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := sandbox.New(opts)
		_ = sandbox.Serve(ctx, ln, s)
		s.FlushWebhooks()
	}()
	return "http://" + ln.Addr().String(), func() { cancel(); <-done }, nil
}
