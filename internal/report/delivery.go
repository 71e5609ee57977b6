package report

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/readmodel"
)

// Delivery is what status webhooks said of a campaign's (or an account's)
// sent messages, in --json output once a webhook has reported on them.
type Delivery struct {
	Sent int `json:"sent"` // accepted: state sent, or failed after send; held ones not
	// Held counts sends Meta holds for quality assessment until a status
	// settles them; HeldStop: the campaign adds no sends meanwhile
	// (--max-held MaxHeld).
	Held            int     `json:"held,omitempty"`
	MaxHeld         int     `json:"max_held,omitempty"`
	HeldStop        bool    `json:"held_stop,omitempty"`
	Delivered       int     `json:"delivered"`
	Read            int     `json:"read"`
	FailedAfterSend int     `json:"failed_after_send"`
	DeliveredRate   float64 `json:"delivered_rate"` // delivered / sent
	ReadRate        float64 `json:"read_rate"`      // read / delivered
	// Replied counts sent messages their recipient answered within the
	// reply window (or by quoting them); OptedOut those answered with an
	// opt-out (keyword or button).
	Replied   int     `json:"replied"`
	ReplyRate float64 `json:"reply_rate"` // replied / sent
	OptedOut  int     `json:"opted_out"`
	// UnknownNoWebhook counts unknown rows no webhook settled within the
	// grace period (campaigns only).
	UnknownNoWebhook *int `json:"unknown_without_webhook,omitempty"`
}

// UnknownGrace is how long an unknown row may wait for a webhook before it
// is reported as most likely never accepted.
const UnknownGrace = time.Hour

// DeliveryOf turns the read model's figures into the JSON shape.
func DeliveryOf(f readmodel.DeliveryFigures) *Delivery {
	return &Delivery{Sent: f.Sent, Delivered: f.Delivered, Read: f.Read, FailedAfterSend: f.FailedAfterSend,
		DeliveredRate: f.DeliveredRate(), ReadRate: f.ReadRate(),
		Replied: f.Replied, ReplyRate: f.ReplyRate(), OptedOut: f.OptedOut,
		Held: f.Held, MaxHeld: f.MaxHeld, HeldStop: f.HeldStop()}
}

// Delivery reads a campaign's delivery figures; nil when no status webhook
// reported on it.
func (r Reporter) Delivery(ctx context.Context, id int64, grace time.Duration) (*Delivery, error) {
	fig, err := r.Reads.CampaignDelivery(ctx, id)
	if err != nil || !fig.AnyReport() {
		return nil, err
	}
	d := DeliveryOf(fig)
	stale, err := r.Reads.StaleUnknown(ctx, id, grace)
	if err != nil {
		return nil, err
	}
	d.UnknownNoWebhook = &stale
	return d, nil
}

// addAccountDelivery sets the delivery figures of the accounts that status
// webhooks reported on.
func (r Reporter) addAccountDelivery(ctx context.Context, accts []AccountStatus) error {
	byName, err := r.Reads.AccountDelivery(ctx, 0)
	if err != nil {
		return err
	}
	for i := range accts {
		if fig, ok := byName[accts[i].Name]; ok {
			accts[i].Delivery = DeliveryOf(fig)
		}
	}
	return nil
}
