package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ui"
	"github.com/wasend/wasend/internal/whatsapp"
)

// NumberInfo turns what the Graph API said of a number into what wasend
// keeps of it. The error says when the portfolio's messaging limit could
// not be read: such a number is not used, since wasend could not keep
// within a limit it does not know.
func NumberInfo(p whatsapp.PhoneNumber, at time.Time) (campaign.NumberInfo, error) {
	n := campaign.NumberInfo{QualityRating: p.QualityRating, Throughput: p.ThroughputPerSecond(),
		VerifiedName: p.VerifiedName, NameStatus: p.NameStatus, At: at}
	if p.MessagingLimit == "" {
		return n, fmt.Errorf("the messaging limit could not be read (no whatsapp_business_manager_messaging_limit in the answer)")
	}
	limit, err := campaign.ParseLimit(p.MessagingLimit)
	if err != nil {
		return n, fmt.Errorf("the messaging limit could not be read: %w", err)
	}
	n.MessagingLimit = limit
	return n, nil
}

// SyncRecorder keeps what a sync read of the numbers; driver.Driver is one.
type SyncRecorder interface {
	RecordSync(ctx context.Context, name string, n campaign.NumberInfo) (campaign.AccountStatus, error)
	UpdateAccount(ctx context.Context, name string, ch campaign.AccountChange) (campaign.AccountStatus, error)
}

// RecordSyncs keeps what the checks read of each number that passed, warns
// loudly about RED quality and, with pauseOnRed, disables those accounts.
// flags ends the command lines the warnings suggest (see Options.Flags).
func RecordSyncs(ctx context.Context, st SyncRecorder, io *ui.IOStreams, checks []AccountCheck, pauseOnRed bool, flags string, now func() time.Time) error {
	for _, c := range checks {
		if c.Verdict != VerdictOK {
			continue
		}
		info, err := NumberInfo(c.Number, now())
		if err != nil {
			continue // CheckAccounts failed such a number already
		}
		if _, err := st.RecordSync(ctx, c.Account.Name, info); err != nil {
			return err
		}
		if info.QualityRating != "RED" {
			continue
		}
		if !pauseOnRed {
			io.Warnf("account %s: QUALITY RATING IS RED (%s): Meta may restrict the number; stop or slow it (`wasend account set %s --disable%s`, or sync with --pause-on-red)",
				c.Account.Name, c.Account.PhoneNumberID, c.Account.Name, flags)
			continue
		}
		disabled := true
		if _, err := st.UpdateAccount(ctx, c.Account.Name, campaign.AccountChange{Disabled: &disabled}); err != nil {
			return err
		}
		io.Warnf("account %s: QUALITY RATING IS RED: the account is disabled (--pause-on-red); `wasend account set %s --enable%s` when it recovers",
			c.Account.Name, c.Account.Name, flags)
	}
	return nil
}
