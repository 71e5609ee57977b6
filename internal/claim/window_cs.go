package claim

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store"
)

// The customer service window, checked again just before sending: a text
// campaign's row whose recipient's window closed since the import (or who
// never wrote) is skipped with the import's reason, not sent — the Cloud
// API would refuse it (131047). Templates and --ignore-window campaigns
// are not checked (campaigns.service_window off).

// serviceWindow is a claim's look at the campaign's window rule: nil when
// its rows need none.
type serviceWindow struct{}

// openServiceWindow reads whether campaign id's rows need an open window.
func openServiceWindow(ctx context.Context, tx store.ClaimTx, id int64) (*serviceWindow, error) {
	on, err := tx.ServiceWindow(ctx, id)
	if err != nil || !on {
		return nil, err
	}
	return &serviceWindow{}, nil
}

// drop skips the rows of msgs whose recipient has no window open at now,
// and returns the others.
func (w *serviceWindow) drop(ctx context.Context, tx store.ClaimTx, msgs []campaign.Message, now time.Time) ([]campaign.Message, error) {
	if w == nil || len(msgs) == 0 {
		return msgs, nil
	}
	phones := make([]string, len(msgs))
	for i, m := range msgs {
		phones[i] = m.Phone
	}
	last, err := tx.LastInbound(ctx, phones)
	if err != nil {
		return nil, err
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		at := last[m.Phone]
		if campaign.WindowOpen(at, now) {
			out = append(out, m)
			continue
		}
		if err := tx.SkipNoWindow(ctx, m.ID, campaign.NoWindowReason(at), now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dropUnsendable is dropSuppressed, then the window's check.
func dropUnsendable(ctx context.Context, tx store.ClaimTx, w *serviceWindow, due []store.DueRow, now time.Time) ([]campaign.Message, error) {
	msgs, err := dropSuppressed(ctx, tx, due, now)
	if err != nil {
		return nil, err
	}
	return w.drop(ctx, tx, msgs, now)
}
