package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/slowtrace"
	"github.com/wasend/wasend/internal/store/driver"
)

// Applying the inbox: which move each stored body makes, decided here by
// Rules from the facts the store reads, and made through the store's
// InboxTx, whose every move is one statement that no longer applies to a
// row that moved on (a duplicate, a late status, another process's move).

// InboxStore is the store as the drain needs it; *store.Store is one.
type InboxStore interface {
	WithInbox(ctx context.Context, fn func(tx driver.InboxTx, now time.Time) error) error
}

// replyClockSlack lets an answer whose webhook time (whole seconds, Meta's
// clock) is a little before our send's (this host's clock) still reply to
// it.
const replyClockSlack = time.Minute

// Drain applies up to max stored bodies, oldest first, and settles statuses
// and answers that were waiting for their row's send to be recorded, in
// one transaction: a body is applied exactly once even with several
// appliers on one database. It returns what it did; Bodies == 0 means the
// inbox was empty.
//
// Parts almost always apply, so a batch first runs without a savepoint per
// part (direct); when one fails, the transaction is rolled back and the
// batch applied again with each part under its own savepoint, which undoes
// the failing part alone.
func Drain(ctx context.Context, in InboxStore, max int, rules Rules) (campaign.ApplyReport, error) {
	rep, err := drain(ctx, in, max, rules, false)
	if errors.Is(err, errPartFailed) {
		return drain(ctx, in, max, rules, true)
	}
	return rep, err
}

// errPartFailed is how a part that failed without its savepoint aborts the
// transaction (direct).
var errPartFailed = errors.New("a part failed without its savepoint")

// direct is the transaction as a batch applies it first: a part runs
// without a savepoint, and its failure aborts the whole transaction.
type direct struct{ driver.InboxTx }

func (direct) Part(_ context.Context, apply func() error) (skip, err error) {
	if err := apply(); err != nil {
		return nil, fmt.Errorf("%w: %w", errPartFailed, err)
	}
	return nil, nil
}

func drain(ctx context.Context, in InboxStore, max int, rules Rules, careful bool) (campaign.ApplyReport, error) {
	var rep campaign.ApplyReport
	err := in.WithInbox(ctx, func(tx driver.InboxTx, now time.Time) error {
		rep = campaign.ApplyReport{} // a retried transaction starts over
		if !careful {
			tx = direct{tx}
		}
		// A slow body names its slow part (WASEND_TRACE_SLOW): when each
		// part ended, from the body's start, and whether its thread ran,
		// waited for a CPU or was blocked.
		sp, took := slowtrace.StartThread(), []any{}
		mark := func(part string) {
			if slowtrace.On() {
				took = append(took, part, sp.Since())
			}
		}
		defer func() {
			sp.End("applier body", append([]any{"bodies", rep.Bodies, "statuses", rep.Statuses}, took...)...)
		}()
		batch, err := tx.Bodies(ctx, max)
		if err != nil {
			return err
		}
		mark("read")
		ns := make([]*campaign.Notification, len(batch))
		whys := make([]string, len(batch))
		for i, e := range batch {
			n, err := rules.Decode(e.Body)
			if err != nil {
				rep.Malformed++
				whys[i] = err.Error()
				continue
			}
			ns[i] = &n
		}
		var plain *advances
		if !careful {
			if plain, err = plainAdvances(ctx, tx, ns, rules, now); err != nil {
				return err
			}
		}
		mark("facts")
		// Every status body names its number: noted once a transaction.
		noted := map[string]string{}
		applied := make([]int64, 0, len(batch)) // the bodies applied whole: marked in one statement
		for i, e := range batch {
			if ns[i] != nil {
				skips := len(rep.Skips)
				if err := applyNotification(ctx, tx, *ns[i], rules, now, noted, &rep); err != nil {
					return fmt.Errorf("apply webhook body %d: %w", e.ID, err)
				}
				whys[i] = strings.Join(rep.Skips[skips:], "; ")
			}
			if whys[i] == "" {
				applied = append(applied, e.ID)
			} else if err := tx.Applied(ctx, []int64{e.ID}, whys[i], now); err != nil {
				return err
			}
			rep.Bodies++
		}
		mark("parts")
		if len(applied) > 0 {
			if err := tx.Applied(ctx, applied, "", now); err != nil {
				return err
			}
		}
		mark("marked")
		// The plain statuses' rows are touched by nothing else in the batch.
		if err := plain.apply(ctx, tx, now, &rep); err != nil {
			return fmt.Errorf("%w: %w", errPartFailed, err)
		}
		mark("advanced")
		if err := settleDeferred(ctx, tx, rules, now, max, &rep); err != nil {
			return err
		}
		mark("deferred")
		return linkWaitingInbound(ctx, tx, rules, now, max, &rep)
	})
	return rep, err
}

// applyNotification applies one body, each of its parts (a number, a
// status, an event) on its own: a part that cannot apply is undone alone
// and skipped with its reason (part), so that one status never holds up
// the inbox. Only a fault of the database itself fails the body. noted are
// the numbers this transaction already noted (display → id).
func applyNotification(ctx context.Context, tx driver.InboxTx, n campaign.Notification, rules Rules, now time.Time,
	noted map[string]string, rep *campaign.ApplyReport) error {
	for display, id := range n.Numbers {
		if was, ok := noted[display]; ok && was == id {
			continue
		}
		skipped := rep.Skipped
		if err := part(ctx, tx, rep, "number "+display, func() error {
			return tx.NoteNumber(ctx, display, id, now)
		}); err != nil {
			return err
		}
		if rep.Skipped == skipped {
			noted[display] = id
		}
	}
	if len(n.Links) > 0 {
		if err := part(ctx, tx, rep, "recipient links", func() error { return tx.LearnLinks(ctx, n.Links, now) }); err != nil {
			return err
		}
	}
	for _, ev := range n.Statuses {
		if err := part(ctx, tx, rep, fmt.Sprintf("status %s of %s", ev.Status, ev.WAMID), func() error {
			return keepStatus(ctx, tx, ev, rules, now, rep)
		}); err != nil {
			return err
		}
	}
	for _, m := range n.Inbound {
		if err := part(ctx, tx, rep, "inbound message "+m.WAMID, func() error {
			return keepInbound(ctx, tx, m, rules, now, rep)
		}); err != nil {
			return err
		}
	}
	for _, ev := range n.Templates {
		why := rules.TemplatePause(ev)
		if why == "" {
			continue
		}
		if err := part(ctx, tx, rep, fmt.Sprintf("template %s %s", ev.Template, ev.Event), func() error {
			k, err := tx.PauseTemplate(ctx, ev, why)
			rep.Paused += k
			return err
		}); err != nil {
			return err
		}
	}
	for _, ev := range n.Upgrades {
		if err := part(ctx, tx, rep, fmt.Sprintf("%s %s", ev.Field, ev.Event), func() error {
			_, err := tx.RaiseThroughput(ctx, ev, now)
			return err
		}); err != nil {
			return err
		}
	}
	for _, ev := range n.Accounts {
		if err := part(ctx, tx, rep, fmt.Sprintf("%s %s", ev.Field, ev.Event), func() error {
			why, until := rules.AccountStop(ev, now)
			k, err := tx.StopNumber(ctx, ev, why, until)
			rep.Stopped += k
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// part applies one part of a body under the store's savepoint. When it
// cannot apply, what it counted is undone with what it wrote, and the
// reason goes to rep.Skips; a fault of the database itself is returned.
func part(ctx context.Context, tx driver.InboxTx, rep *campaign.ApplyReport, what string, apply func() error) error {
	saved := *rep
	saved.ByStatus = maps.Clone(rep.ByStatus)
	skip, err := tx.Part(ctx, apply)
	if err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	if skip != nil {
		*rep = saved
		rep.Skipped++
		rep.Skips = append(rep.Skips, fmt.Sprintf("%s not applied: %v", what, skip))
	}
	return nil
}

// keepStatus stores a status once and applies it to its row.
func keepStatus(ctx context.Context, tx driver.InboxTx, ev campaign.StatusEvent, rules Rules, now time.Time, rep *campaign.ApplyReport) error {
	rep.Statuses++
	if !ev.Status.Reported() || ev.WAMID == "" {
		// Played, or a status wasend does not track: message_statuses keeps
		// a rung of the ladder a webhook names, keyed by the wamid.
		rep.Unmatched++
		return nil
	}
	kept, matched, err := tx.KeepStatus(ctx, ev, now)
	if err != nil {
		return err
	}
	if !kept {
		// Kept before. Matched, it is a duplicate; still waiting for its
		// wamid, it is the same unmatched status again (the store links it
		// when the send is recorded).
		if matched {
			rep.Duplicates++
			return nil
		}
	} else {
		if rep.ByStatus == nil {
			rep.ByStatus = map[campaign.Delivery]int{}
		}
		rep.ByStatus[ev.Status]++
	}
	id, err := matchStatus(ctx, tx, ev)
	if err != nil {
		return err
	}
	if id == 0 {
		rep.Unmatched++ // kept, and matched if its wamid is recorded later
		return optOutUnmatched(ctx, tx, ev, rules, now)
	}
	return settleStatus(ctx, tx, id, ev, rules, now, rep)
}

// matchStatus finds the row a kept status is about and links the status
// to it: by wamid, else by the callback data wasend set on the send
// ("wasend:cC:mM"), which also finds rows whose answer never reached the
// database. 0: not a message of ours.
func matchStatus(ctx context.Context, tx driver.InboxTx, ev campaign.StatusEvent) (int64, error) {
	id, err := tx.WAMIDRow(ctx, ev.WAMID)
	if err != nil {
		return 0, err
	}
	if id == 0 {
		cid, mid, ok := campaign.ParseCallbackData(ev.CallbackData)
		if !ok {
			return 0, nil
		}
		phone, found, err := tx.RowPhone(ctx, cid, mid)
		// Another database sending from the same business account numbers
		// its rows the same way: the recipient must be the row's too.
		if err != nil || !found || !campaign.StatusRecipientIs(phone, ev) {
			return 0, err
		}
		id = mid
	}
	return id, tx.LinkStatus(ctx, id, ev)
}

// optOutUnmatched suppresses the recipient of a status no row of ours
// matches when the rules say so and the sending number is one of ours.
func optOutUnmatched(ctx context.Context, tx driver.InboxTx, ev campaign.StatusEvent, rules Rules, now time.Time) error {
	phone, reason := rules.OptOut(ev, now)
	if reason == "" {
		return nil
	}
	ours, err := tx.OurNumber(ctx, ev.PhoneNumberID)
	if err != nil || !ours {
		return err
	}
	return tx.Suppress(ctx, phone, reason, now)
}

// settleStatus reads the facts of message id that a kept status's meaning
// depends on, asks the rules what the status does, and makes that move
// and its effects. A status whose row is gone changes nothing.
func settleStatus(ctx context.Context, tx driver.InboxTx, id int64, ev campaign.StatusEvent, rules Rules, now time.Time, rep *campaign.ApplyReport) error {
	r, phone, ok, err := tx.StatusRow(ctx, id, ev)
	if err != nil || !ok {
		return err
	}
	a := rules.Settle(r, ev, now)
	if a.Move == campaign.StatusWait {
		rep.Deferred++
		return tx.Defer(ctx, ev, true)
	}
	if a.Adopt {
		ok, err := tx.AdoptSend(ctx, id, ev, now)
		if err != nil || !ok {
			return err
		}
		rep.Adopted++
	}
	if a.NotResent {
		rep.NotResent++
	}
	switch a.Move {
	case campaign.StatusAdvance:
		adv := campaign.DeliveryAdvance{ID: id, WAMID: ev.WAMID}
		adv.Fold(ev)
		moved, err := tx.KeepAdvances(ctx, nil, []campaign.DeliveryAdvance{adv}, now)
		if len(moved) > 0 {
			rep.Advanced++
		}
		return err
	case campaign.StatusReschedule:
		ok, err := tx.RescheduleAfterFailure(ctx, id, ev, a.RetryAt, a.Error, now)
		if err != nil || !ok {
			return err
		}
		rep.Rescheduled++
	case campaign.StatusFail:
		ok, err := tx.FailAfterSend(ctx, id, ev, a.Error, now)
		if err != nil || !ok {
			return err
		}
		rep.Failed++
	}
	return asyncEffects(ctx, tx, r.CampaignID, r.AccountID, phone, ev, a, now)
}

// asyncEffects carries out what an asynchronous failure means beyond its
// row (campaign cid, account aid, phone), as the store does for a
// synchronous answer.
func asyncEffects(ctx context.Context, tx driver.InboxTx, cid, aid int64, phone string, ev campaign.StatusEvent, a campaign.StatusAction, now time.Time) error {
	if a.Suppress != "" {
		if err := tx.Suppress(ctx, phone, a.Suppress, now); err != nil {
			return err
		}
	}
	if a.Pause != "" {
		if err := tx.PauseCampaign(ctx, cid, a.Pause); err != nil {
			return err
		}
	}
	if !a.RestrictUntil.IsZero() {
		if err := tx.RestrictAccount(ctx, aid, a.RestrictUntil, a.Error, ev.ErrorCode); err != nil {
			return err
		}
	}
	if a.DropAccount {
		return tx.DropAccount(ctx, cid, aid, a.Error, ev.ErrorCode, now)
	}
	return nil
}

// settleDeferred applies kept statuses whose row was in flight when they
// came and has been recorded since (or recovered as unknown).
func settleDeferred(ctx context.Context, tx driver.InboxTx, rules Rules, now time.Time, max int, rep *campaign.ApplyReport) error {
	ds, err := tx.Deferred(ctx, max)
	if err != nil {
		return err
	}
	// Failures last: a status that moves a row forward must not find it
	// already rescheduled by its own message's failure.
	for pass := 0; pass < 2; pass++ {
		for _, d := range ds {
			if (d.Ev.Status == campaign.DeliveryFailed) != (pass == 1) {
				continue
			}
			if err := tx.Defer(ctx, d.Ev, false); err != nil {
				return err
			}
			if err := settleStatus(ctx, tx, d.ID, d.Ev, rules, now, rep); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepInbound stores one inbound message once and applies what it means.
func keepInbound(ctx context.Context, tx driver.InboxTx, m campaign.InboundMessage, rules Rules, now time.Time, rep *campaign.ApplyReport) error {
	rep.Inbound++
	if m.Unknown {
		rep.InboundUnknown++
	}
	mean := rules.Inbound(m)
	row := campaign.InboundRow{ID: m.WAMID, PhoneNumberID: m.PhoneNumberID, At: m.At, ReceivedAt: now, Type: m.Type,
		Text: m.Text, Payload: m.Payload, ContextID: m.ContextID, Name: m.Name, Kind: mean.Kind, Reason: mean.Reason,
		Unknown: m.Unknown}
	var err error
	if row.Phone, err = tx.InboundSender(ctx, m); err != nil {
		return err
	}
	if row.ID == "" {
		sum := sha256.Sum256([]byte(m.Raw))
		row.ID = "raw:" + hex.EncodeToString(sum[:16])
	}
	if row.At.IsZero() {
		row.At = now
	}
	if m.PhoneNumberID != "" {
		if row.AccountID, err = tx.AccountOf(ctx, m.PhoneNumberID); err != nil {
			return err
		}
	}
	if mean.Answers && row.Phone != "" && !m.Unknown {
		if row.Replies, row.Wait, err = repliesTo(ctx, tx, row.Phone, m.ContextID, row.At, rules.ReplyWindow()); err != nil {
			return err
		}
	}
	if m.Unknown {
		row.Raw = m.Raw
	}
	kept, err := tx.KeepInbound(ctx, row)
	if err != nil || !kept {
		return err // not kept: kept before, a retried body
	}
	switch mean.Kind {
	case campaign.InboundOptOut:
		if campaign.CheckListable(row.Phone) != nil {
			rep.Skips = append(rep.Skips, fmt.Sprintf("opt-out of %q not suppressed: not a phone number or a user id", m.From))
			break
		}
		rep.OptOuts++
		// Listed from when the person said so, which opt-ins are
		// compared with.
		if err := tx.Suppress(ctx, row.Phone, mean.Reason, minTime(row.At, now)); err != nil {
			return err
		}
	case campaign.InboundOptIn:
		rep.OptIns++ // listed (suppress list), never acted on
	}
	return linkReply(ctx, tx, row.Replies, row.At, m.Text, mean.Kind, rep)
}

// linkReply notes an answer on the row it replies to (none: ID 0).
func linkReply(ctx context.Context, tx driver.InboxTx, r campaign.RepliedRow, at time.Time, text string, kind campaign.InboundKind, rep *campaign.ApplyReport) error {
	if r.ID == 0 {
		return nil
	}
	first, err := tx.NoteReply(ctx, r, at, text)
	if err != nil {
		return err
	}
	if first {
		rep.Replies++
	}
	if kind == campaign.InboundOptOut {
		return tx.NoteOptOut(ctx, r, at)
	}
	return nil
}

// repliesTo finds the message an answer from phone at time at replies to:
// the one context.id names, if it was sent to phone, at any age; else the
// latest sent to phone within window before at. wait: none yet, but a
// message to phone is in flight (its send not recorded): the answer may
// be to it, and is linked at a later drain (linkWaitingInbound).
func repliesTo(ctx context.Context, tx driver.InboxTx, phone, contextID string, at time.Time, window time.Duration) (r campaign.RepliedRow, wait bool, err error) {
	if contextID != "" {
		r, ok, err := tx.ContextRow(ctx, contextID, phone)
		if err != nil || ok {
			return r, false, err
		}
	}
	sent, err := tx.SentTo(ctx, phone)
	if err != nil {
		return r, false, err
	}
	var latest time.Time
	from, to := at.Add(-window), at.Add(replyClockSlack)
	for _, c := range sent {
		switch {
		case c.InFlight:
			wait = true
		case !c.SentAt.IsZero() && !c.SentAt.Before(from) && !c.SentAt.After(to) && c.SentAt.After(latest):
			r, latest = c.RepliedRow, c.SentAt
		}
	}
	if wait {
		return campaign.RepliedRow{}, true, nil
	}
	return r, false, nil
}

// linkWaitingInbound links the answers that came while a message to their
// phone was in flight, now that sends were recorded; an answer still
// finding one in flight waits on, until its reply window has passed.
func linkWaitingInbound(ctx context.Context, tx driver.InboxTx, rules Rules, now time.Time, max int, rep *campaign.ApplyReport) error {
	ws, err := tx.WaitingInbound(ctx, max)
	if err != nil {
		return err
	}
	window := rules.ReplyWindow()
	for _, w := range ws {
		r, wait, err := repliesTo(ctx, tx, w.Phone, w.ContextID, w.At, window)
		if err != nil {
			return err
		}
		if wait && now.Sub(w.At) < window {
			continue
		}
		if err := tx.LinkInbound(ctx, w.ID, r); err != nil {
			return err
		}
		if err := linkReply(ctx, tx, r, w.At, w.Text, w.Kind, rep); err != nil {
			return err
		}
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
