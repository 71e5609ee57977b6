package claim

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// The customer service window, checked again just before sending: a text
// campaign's row whose recipient's window closed since the import (or who
// never wrote) is skipped with the import's reason, not sent — the Cloud
// API would refuse it (131047). Meta keeps the window per business number,
// so a row whose recipient wrote to some of the campaign's numbers only
// goes from one of those (the gate is offered no other); one who wrote to
// none of them is skipped. Templates and --ignore-window campaigns are not
// checked (campaigns.service_window off).

// serviceWindow is a claim's look at the campaign's window rule: nil when
// its rows need none.
type serviceWindow struct {
	numbers []string              // the phone number ids the campaign may send from
	accts   []driver.ClaimAccount // the accounts the gate is offered
	only    map[int64]accountMask // per kept row whose window is open with some of accts only
}

// accountMask says which of the gate's accounts may send a row.
type accountMask []bool

// openServiceWindow reads whether campaign id's rows need an open window;
// usable are the numbers the campaign may send from, offered those this
// claim offers the gate (its turn may leave some out).
func openServiceWindow(ctx context.Context, tx driver.ClaimTx, id int64, usable, offered []driver.ClaimAccount) (*serviceWindow, error) {
	on, err := tx.ServiceWindow(ctx, id)
	if err != nil || !on {
		return nil, err
	}
	w := &serviceWindow{accts: offered, only: map[int64]accountMask{}}
	for _, a := range usable {
		w.numbers = append(w.numbers, a.PhoneNumberID)
	}
	return w, nil
}

// drop skips the rows of msgs whose recipient has no window open at now
// with any of the campaign's numbers, and returns the others, noting which
// accounts may send those whose window is open with some only.
func (w *serviceWindow) drop(ctx context.Context, tx driver.ClaimTx, msgs []campaign.Message, now time.Time) ([]campaign.Message, error) {
	if w == nil || len(msgs) == 0 {
		return msgs, nil
	}
	keys := make([]string, len(msgs))
	for i, m := range msgs {
		keys[i] = m.Phone
	}
	wrote, err := tx.LastInbound(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		ww := wrote[m.Phone]
		if !w.openWithAny(ww, now) {
			if err := tx.SkipNoWindow(ctx, m.ID, campaign.NoWindowReasonFrom(ww, w.numbers, now), now); err != nil {
				return nil, err
			}
			continue
		}
		mask, all := make(accountMask, len(w.accts)), true
		for i, a := range w.accts {
			mask[i] = ww.Open(a.PhoneNumberID, now)
			all = all && mask[i]
		}
		if !all {
			w.only[m.ID] = mask
		}
		out = append(out, m)
	}
	return out, nil
}

func (w *serviceWindow) openWithAny(ww campaign.Wrote, now time.Time) bool {
	for _, n := range w.numbers {
		if ww.Open(n, now) {
			return true
		}
	}
	return false
}

// accounts is the mask of the gate's accounts that may send row id: nil
// when any may.
func (w *serviceWindow) accounts(id int64) accountMask {
	if w == nil {
		return nil
	}
	return w.only[id]
}

// none reports whether the mask lets no account send.
func (m accountMask) none() bool {
	for _, ok := range m {
		if ok {
			return false
		}
	}
	return m != nil
}

// dropUnsendable is dropSuppressed, then the window's check.
func dropUnsendable(ctx context.Context, tx driver.ClaimTx, w *serviceWindow, due []driver.DueRow, now time.Time) ([]campaign.Message, error) {
	msgs, err := dropSuppressed(ctx, tx, due, now)
	if err != nil {
		return nil, err
	}
	return w.drop(ctx, tx, msgs, now)
}
