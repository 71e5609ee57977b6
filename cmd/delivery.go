package cmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/store"
)

// campaignDelivery reads a campaign's delivery figures, nil when no
// status webhook reported on it.
func campaignDelivery(ctx context.Context, f *Factory, st *store.Store, id int64, grace time.Duration) (*report.Delivery, error) {
	return f.reporter(st).Delivery(ctx, id, grace)
}

func pct(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

func deliveryLine(d *report.Delivery) string {
	return fmt.Sprintf("%d sent, %d delivered (%s), %d read (%s of delivered), %d failed after send",
		d.Sent, d.Delivered, pct(d.DeliveredRate), d.Read, pct(d.ReadRate), d.FailedAfterSend)
}

// printShowDelivery writes campaign show's delivery block (terminal form):
// one figure a line, so that it fits a terminal of 80 columns.
func printShowDelivery(f *Factory, id int64, d *report.Delivery, accts map[string]readmodel.DeliveryFigures, grace time.Duration) error {
	if d == nil {
		return nil
	}
	w := f.IO.Out
	fmt.Fprintln(w, "\nDelivery (status webhooks)")
	kv(w, "Sent", strconv.Itoa(d.Sent))
	kv(w, "Delivered", fmt.Sprintf("%d (%s of sent)", d.Delivered, pct(d.DeliveredRate)))
	kv(w, "Read", fmt.Sprintf("%d (%s of delivered)", d.Read, pct(d.ReadRate)))
	kv(w, "Failed", fmt.Sprintf("%d after send", d.FailedAfterSend))
	if n := *d.UnknownNoWebhook; n > 0 {
		kv(w, "Unknown", fmt.Sprintf("%d with no webhook after %s: most likely never accepted", n, grace))
		kv(w, "Resend", fmt.Sprintf("wasend campaign retry %d --unknown%s", id, dbHint(f)))
	}
	if len(accts) == 0 {
		return nil
	}
	t := newTable(f, "ACCOUNT", "SENT", "DELIVERED", "READ", "FAILED AFTER SEND", "DELIVERED/SENT", "READ/DELIVERED").
		Truncate("ACCOUNT").Optional("READ/DELIVERED", "DELIVERED/SENT", "FAILED AFTER SEND")
	for _, name := range sortedKeys(accts) {
		a := report.DeliveryOf(accts[name])
		t.Row(name, strconv.Itoa(a.Sent), strconv.Itoa(a.Delivered), strconv.Itoa(a.Read), strconv.Itoa(a.FailedAfterSend),
			pct(a.DeliveredRate), pct(a.ReadRate))
	}
	return t.Render()
}

// printDeliveryRecords writes the piped form: "delivery" and
// "account_delivery" records.
func printDeliveryRecords(w io.Writer, d *report.Delivery, accts map[string]readmodel.DeliveryFigures) error {
	if d == nil {
		return nil
	}
	var b strings.Builder
	rec := func(fields ...string) { b.WriteString(strings.Join(fields, "\t") + "\n") }
	rate := func(r float64) string { return strconv.FormatFloat(r, 'f', 4, 64) }
	rec("delivery", strconv.Itoa(d.Sent), strconv.Itoa(d.Delivered), strconv.Itoa(d.Read), strconv.Itoa(d.FailedAfterSend),
		rate(d.DeliveredRate), rate(d.ReadRate), strconv.Itoa(*d.UnknownNoWebhook))
	for _, name := range sortedKeys(accts) {
		a := report.DeliveryOf(accts[name])
		rec("account_delivery", name, strconv.Itoa(a.Sent), strconv.Itoa(a.Delivered), strconv.Itoa(a.Read),
			strconv.Itoa(a.FailedAfterSend), rate(a.DeliveredRate), rate(a.ReadRate))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printStatusDelivery writes status's delivery table for the campaigns
// that webhooks reported on.
func printStatusDelivery(f *Factory, camps []report.Campaign) error {
	var some bool
	for _, c := range camps {
		some = some || c.Delivery != nil
	}
	if !some {
		return nil
	}
	if f.IO.IsStdoutTTY() {
		io.WriteString(f.IO.Out, "\nDelivery (status webhooks)\n")
	}
	t := newTable(f, "ID", "NAME", "SENT", "DELIVERED", "READ", "FAILED AFTER SEND", "DELIVERED/SENT", "READ/DELIVERED").
		Kind("campaign_delivery").Truncate("NAME").Optional("READ/DELIVERED", "DELIVERED/SENT", "FAILED AFTER SEND")
	for _, c := range camps {
		if d := c.Delivery; d != nil {
			t.Row(strconv.FormatInt(c.ID, 10), c.Name, strconv.Itoa(d.Sent), strconv.Itoa(d.Delivered), strconv.Itoa(d.Read),
				strconv.Itoa(d.FailedAfterSend), pct(d.DeliveredRate), pct(d.ReadRate))
		}
	}
	return t.Render()
}
