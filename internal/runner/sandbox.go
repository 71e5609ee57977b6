package runner

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
)

// SandboxTokenEnv is the token variable of the demo accounts; the sandbox
// accepts any token, so none needs to be set.
const SandboxTokenEnv = "WASEND_SANDBOX_TOKEN"

// SandboxToken is the token every call to a sandbox carries in place of
// the account's own: a real token never goes to the stand-in.
const SandboxToken = "sandbox-token"

// DemoWABA is the WhatsApp Business Account of the demo accounts: template
// sync reads the sandbox's templates for it, so a sandbox run's template is
// checked like a real one.
const DemoWABA = "100000000000100"

// DemoAccounts are created in the sandbox database, one per tier.
var DemoAccounts = []campaign.Account{
	{Name: "sandbox-new", PhoneNumberID: "100000000000001", Tier: campaign.TierNew, TokenEnv: SandboxTokenEnv, WABA: DemoWABA},
	{Name: "sandbox-warm", PhoneNumberID: "100000000000002", Tier: campaign.TierWarm, TokenEnv: SandboxTokenEnv, WABA: DemoWABA},
	{Name: "sandbox-active", PhoneNumberID: "100000000000003", Tier: campaign.TierActive, TokenEnv: SandboxTokenEnv, WABA: DemoWABA},
}

// AccountKeeper lists, adds and changes accounts; driver.Driver is one.
type AccountKeeper interface {
	AccountLister
	AddAccount(ctx context.Context, a campaign.Account) (campaign.Account, error)
	UpdateAccount(ctx context.Context, name string, ch campaign.AccountChange) (campaign.AccountStatus, error)
}

// EnsureDemoAccounts adds the demo accounts that are missing, and gives
// those a former version added without a WABA the demo one.
func EnsureDemoAccounts(ctx context.Context, st AccountKeeper) error {
	have, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	byName := map[string]campaign.Account{}
	for _, a := range have {
		byName[a.Name] = a.Account
	}
	for _, a := range DemoAccounts {
		old, ok := byName[a.Name]
		switch {
		case !ok:
			if _, err := st.AddAccount(ctx, a); err != nil && !errors.Is(err, driver.ErrExists) {
				return err
			}
		case old.WABA == "" && old.PhoneNumberID == a.PhoneNumberID:
			waba := a.WABA
			if _, err := st.UpdateAccount(ctx, a.Name, campaign.AccountChange{WABA: &waba}); err != nil {
				return err
			}
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
