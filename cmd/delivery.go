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
	"github.com/wasend/wasend/internal/store/driver"
)

// campaignDelivery reads a campaign's delivery figures, nil when no
// status webhook reported on it.
func campaignDelivery(ctx context.Context, f *Factory, st driver.Driver, id int64, grace time.Duration) (*report.Delivery, error) {
	return f.reporter(st).Delivery(ctx, id, grace)
}

func pct(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

// printShowDelivery writes campaign show's delivery block (terminal form):
// one figure a line, so that it fits a terminal of 80 columns.
func printShowDelivery(f *Factory, id int64, d *report.Delivery, accts map[string]readmodel.DeliveryFigures, grace time.Duration, failed []readmodel.FailedStatusGroup) error {
	if d == nil && len(failed) == 0 {
		return nil
	}
	if d == nil { // every status was a failure whose row was put back
		zero := 0
		d = &report.Delivery{UnknownNoWebhook: &zero}
	}
	w := f.IO.Out
	fmt.Fprintln(w, "\nDelivery (status webhooks)")
	kv(w, "Sent", strconv.Itoa(d.Sent))
	if d.Held > 0 {
		kv(w, "Held", heldText(d.Held, d.HeldStop))
	}
	kv(w, "Delivered", fmt.Sprintf("%d (%s of sent)", d.Delivered, pct(d.DeliveredRate)))
	kv(w, "Read", fmt.Sprintf("%d (%s of delivered)", d.Read, pct(d.ReadRate)))
	kv(w, "Failed", fmt.Sprintf("%d after send: rows a failed status left failed", d.FailedAfterSend))
	if len(failed) > 0 {
		var n, kept, back, again int
		var codes []string
		for i, g := range failed {
			n, kept, back, again = n+g.Count, kept+g.KeptFailed, back+g.PutBack, again+g.SentAgain
			switch {
			case i < 3:
				codes = append(codes, fmt.Sprintf("%s × %d", codeText(g.Code), g.Count))
			case i == 3:
				codes = append(codes, "…")
			}
		}
		kv(w, "Failed status", fmt.Sprintf("%d arrived (%s)", n, strings.Join(codes, ", ")))
		kv(w, "Of them", fmt.Sprintf("%d left failed, %d put back to send again, %d sent again", kept, back, again))
	}
	if n := *d.UnknownNoWebhook; n > 0 {
		kv(w, "Unknown", fmt.Sprintf("%d with no webhook after %s: most likely never accepted", n, grace))
		kv(w, "Resend", fmt.Sprintf("wasend campaign retry %d --unknown%s", id, dbHint(f)))
	}
	// Replies show once there are some: a receiver whose inbound
	// messages go elsewhere would otherwise read as nobody answering.
	replies := d.Replied > 0
	if replies {
		kv(w, "Replied", fmt.Sprintf("%d (%s of sent), %d opted out", d.Replied, pct(d.ReplyRate), d.OptedOut))
	}
	if len(accts) == 0 {
		return nil
	}
	head := []string{"ACCOUNT", "SENT", "DELIVERED", "READ", "FAILED AFTER SEND", "DELIVERED/SENT", "READ/DELIVERED"}
	if replies {
		head = append(head, "REPLIED", "REPLIED/SENT")
	}
	t := newTable(f, head...).Truncate("ACCOUNT").Optional(optionalDelivery(replies)...)
	for _, name := range sortedKeys(accts) {
		a := report.DeliveryOf(accts[name])
		row := []string{name, strconv.Itoa(a.Sent), strconv.Itoa(a.Delivered), strconv.Itoa(a.Read), strconv.Itoa(a.FailedAfterSend),
			pct(a.DeliveredRate), pct(a.ReadRate)}
		if replies {
			row = append(row, strconv.Itoa(a.Replied), pct(a.ReplyRate))
		}
		t.Row(row...)
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
	// Replies are records of their own: scripts reading the delivery
	// records by position keep working.
	rec("replies", strconv.Itoa(d.Replied), strconv.Itoa(d.OptedOut), rate(d.ReplyRate))
	for _, name := range sortedKeys(accts) {
		a := report.DeliveryOf(accts[name])
		rec("account_delivery", name, strconv.Itoa(a.Sent), strconv.Itoa(a.Delivered), strconv.Itoa(a.Read),
			strconv.Itoa(a.FailedAfterSend), rate(a.DeliveredRate), rate(a.ReadRate))
		rec("account_replies", name, strconv.Itoa(a.Replied), strconv.Itoa(a.OptedOut), rate(a.ReplyRate))
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
	if err := t.Render(); err != nil {
		return err
	}
	return printStatusReplies(f, camps)
}

// printStatusReplies writes status's replies table for the campaigns
// people answered; nothing before anyone has.
func printStatusReplies(f *Factory, camps []report.Campaign) error {
	var some bool
	for _, c := range camps {
		some = some || (c.Delivery != nil && c.Delivery.Replied > 0)
	}
	if !some {
		return nil
	}
	if f.IO.IsStdoutTTY() {
		io.WriteString(f.IO.Out, "\nReplies (inbound messages)\n")
	}
	t := newTable(f, "ID", "NAME", "SENT", "REPLIED", "REPLIED/SENT", "OPTED OUT").Kind("campaign_replies").Truncate("NAME")
	for _, c := range camps {
		if d := c.Delivery; d != nil && d.Replied > 0 {
			t.Row(strconv.FormatInt(c.ID, 10), c.Name, strconv.Itoa(d.Sent), strconv.Itoa(d.Replied), pct(d.ReplyRate),
				strconv.Itoa(d.OptedOut))
		}
	}
	return t.Render()
}

// optionalDelivery are the delivery tables' columns a narrow terminal
// leaves out, the first first; with replies, their rate goes before the
// read rate and their count last.
func optionalDelivery(replies bool) []string {
	if !replies {
		return []string{"READ/DELIVERED", "DELIVERED/SENT", "FAILED AFTER SEND"}
	}
	return []string{"REPLIED/SENT", "READ/DELIVERED", "DELIVERED/SENT", "FAILED AFTER SEND", "REPLIED"}
}

// heldText says what held sends mean: accepted, neither sent nor failed
// until a status settles them, and whether the campaign stopped for them.
func heldText(held int, stopped bool) string {
	s := fmt.Sprintf("%d sends held by Meta for quality assessment (template pacing): neither sent nor failed until a status releases or drops them", held)
	if stopped {
		s += "; no more sends of the template until then (--max-held)"
	}
	return s
}
