package webhook

import (
	"context"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// Most statuses Meta posts only move a sent row's delivery up the ladder
// (sent, delivered, read of the wamid the row carries). A batch settles
// those set-based: one read of the batch's rows and kept statuses, then
// one statement keeping the statuses and one moving the rows, instead of
// five statements a status. Every other status (a failure, one that
// adopts a row or waits for it, one not matched by its wamid, one kept
// before without its row) goes through keepStatus one by one, as do all
// the statuses of a row any of those touches, so that a row's statuses
// still apply in the order they came.

// statusKey is a status as message_statuses keeps it: once per wamid.
type statusKey struct {
	wamid  string
	status campaign.Delivery
}

// advances are a batch's plain statuses, settled together by apply.
type advances struct {
	kept  []driver.MatchedStatus
	dups  int // plain statuses kept before (or earlier in the batch)
	moves map[int64]*campaign.DeliveryAdvance
	order []int64 // the rows of moves, in the order they came
}

// plainAdvances takes the plain statuses out of the decoded bodies (ns,
// nil for a body that did not decode) and returns them; what is left in
// ns applies one by one.
func plainAdvances(ctx context.Context, tx driver.InboxTx, ns []*campaign.Notification, rules Rules, now time.Time) (*advances, error) {
	var wamids []string
	seen := map[string]bool{}
	for _, n := range ns {
		for _, ev := range statusesOf(n) {
			if ev.WAMID != "" && !seen[ev.WAMID] {
				seen[ev.WAMID] = true
				wamids = append(wamids, ev.WAMID)
			}
		}
	}
	if len(wamids) == 0 {
		return nil, nil
	}
	rows, kept, err := tx.StatusFacts(ctx, wamids)
	if err != nil {
		return nil, err
	}
	byWAMID := make(map[string]campaign.StatusRow, len(rows))
	shared := map[string]bool{} // wamids two rows carry: not plain
	for _, r := range rows {
		if _, ok := byWAMID[r.WAMID]; ok {
			shared[r.WAMID] = true
		}
		byWAMID[r.WAMID] = r
	}
	keptBefore := make(map[statusKey]int64, len(kept)) // → the row it was matched to (0: none)
	matchedTo := map[string]int64{}                    // wamid → a row its kept statuses were matched to
	failed := map[string]bool{}                        // wamids a failed status is kept of
	for _, k := range kept {
		keptBefore[statusKey{k.WAMID, k.Status}] = k.MessageID
		if k.MessageID != 0 {
			matchedTo[k.WAMID] = k.MessageID
		}
		if k.Status == campaign.DeliveryFailed {
			failed[k.WAMID] = true
		}
	}

	// First pass: which statuses would be plain on their own, and the rows
	// any other status may touch (by its wamid, the row its kept statuses
	// were matched to, or its callback data).
	type candidate struct {
		row int64
		dup bool
	}
	plain := map[*campaign.StatusEvent]candidate{}
	touched := map[int64]bool{}
	inBatch := map[statusKey]bool{}  // statuses earlier in the batch
	slowKeys := map[statusKey]bool{} // of those, the ones applied one by one
	for _, n := range ns {
		for i := range statusesOf(n) {
			ev := &n.Statuses[i]
			key := statusKey{ev.WAMID, ev.Status}
			r, found := byWAMID[ev.WAMID]
			matched, before := keptBefore[key]
			ok := ev.Status.Reported() && ev.WAMID != "" && found && !shared[ev.WAMID] &&
				!slowKeys[key] && (!before || matched != 0)
			dup := before || inBatch[key]
			if ok && !dup {
				row := r
				row.WAMIDFailed = failed[ev.WAMID]
				ok = rules.Settle(row, *ev, now) == campaign.StatusAction{Move: campaign.StatusAdvance}
			}
			inBatch[key] = true
			if ok {
				plain[ev] = candidate{row: r.ID, dup: dup}
				continue
			}
			slowKeys[key] = true
			for _, id := range []int64{r.ID, matchedTo[ev.WAMID], callbackRow(ev.CallbackData)} {
				if id != 0 {
					touched[id] = true
				}
			}
		}
	}

	// Second pass: a row another status touches keeps all its statuses
	// one by one; the others leave their bodies for the batch.
	a := &advances{}
	for _, n := range ns {
		if n == nil {
			continue
		}
		left := n.Statuses[:0:0]
		for i := range n.Statuses {
			ev := &n.Statuses[i]
			c, ok := plain[ev]
			if !ok || touched[c.row] {
				left = append(left, *ev)
				continue
			}
			if c.dup {
				a.dups++
				continue
			}
			a.add(c.row, *ev)
		}
		n.Statuses = left
	}
	return a, nil
}

func statusesOf(n *campaign.Notification) []campaign.StatusEvent {
	if n == nil {
		return nil
	}
	return n.Statuses
}

// callbackRow is the row the callback data wasend set on a send names (0:
// none).
func callbackRow(data string) int64 {
	if _, mid, ok := campaign.ParseCallbackData(data); ok {
		return mid
	}
	return 0
}

// add keeps ev, matched to row id, and folds it into the row's move.
func (a *advances) add(id int64, ev campaign.StatusEvent) {
	a.kept = append(a.kept, driver.MatchedStatus{ID: id, Ev: ev})
	m, ok := a.moves[id]
	if !ok {
		if a.moves == nil {
			a.moves = map[int64]*campaign.DeliveryAdvance{}
		}
		m = &campaign.DeliveryAdvance{ID: id, WAMID: ev.WAMID}
		a.moves[id] = m
		a.order = append(a.order, id)
	}
	m.Fold(ev)
}

// apply keeps the batch's plain statuses and moves their rows, counting
// them in rep as keepStatus counts each.
func (a *advances) apply(ctx context.Context, tx driver.InboxTx, now time.Time, rep *campaign.ApplyReport) error {
	if a == nil {
		return nil
	}
	rep.Statuses += a.dups + len(a.kept)
	rep.Duplicates += a.dups
	if len(a.kept) == 0 {
		return nil
	}
	moves := make([]campaign.DeliveryAdvance, len(a.order))
	for i, id := range a.order {
		moves[i] = *a.moves[id]
	}
	moved, err := tx.KeepAdvances(ctx, a.kept, moves, now)
	if err != nil {
		return err
	}
	ok := make(map[int64]bool, len(moved))
	for _, id := range moved {
		ok[id] = true
	}
	if rep.ByStatus == nil {
		rep.ByStatus = map[campaign.Delivery]int{}
	}
	for _, k := range a.kept {
		rep.ByStatus[k.Ev.Status]++
		if ok[k.ID] {
			rep.Advanced++
		}
	}
	return nil
}
