package storetest

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
)

// testInboxTwoDrains: webhooks reach any host, and every host drains the
// one inbox. Two handles on one database — two hosts — drain it at once,
// in small batches, while a reader watches every row: each body is applied
// exactly once, each status kept once, and no row's delivery ever goes
// down the ladder, whatever order the statuses came in.
func (s suite) testInboxTwoDrains(t *testing.T) {
	s.needRules(t)
	const rows, batch = 15, 4 // rows: the active tier's burst
	clk := newFakeClock()
	db := s.h.NewDB(t)
	hosts := []driver.Driver{s.openAt(t, db, clk, nil), s.openAt(t, db, clk, nil)}
	c, cs := inboxCampaign(t, hosts[0], rows)
	var sent []campaign.Result
	for i, cl := range cs {
		sent = append(sent, campaign.Result{Claim: cl, At: at(time.Second),
			Outcome: campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: "wamid.race" + strconv.Itoa(i), Class: "ok"}})
	}
	if err := hosts[1].RecordAll(t.Context(), "r1", sent); err != nil {
		t.Fatal(err)
	}
	clk.Set(at(time.Minute))
	// Each row's three statuses, each in a body of its own, shuffled; the
	// two receivers store what reached them.
	var bodies [][]byte
	for i, cl := range cs {
		for j, status := range []string{"sent", "delivered", "read"} {
			bodies = append(bodies, statusBody(t, c, rowStatus{cl, "wamid.race" + strconv.Itoa(i), status, time.Duration(2+j) * time.Second}))
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(bodies), func(i, j int) { bodies[i], bodies[j] = bodies[j], bodies[i] })
	for h, host := range hosts {
		for i := h; i < len(bodies); i += len(hosts) {
			if err := host.AddToInbox(t.Context(), bodies[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A reader watches every row's rung while the two drain.
	ctx, stop := context.WithCancel(t.Context())
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		rung := make([]int, rows)
		for ctx.Err() == nil {
			for i, cl := range cs {
				var d *string
				if err := checked(hosts[0]).QueryRowContext(ctx, `SELECT delivery FROM messages WHERE id = ?`, cl.Message.ID).Scan(&d); err != nil {
					if ctx.Err() == nil {
						t.Errorf("watch row %d: %v", i, err)
					}
					return
				}
				r := 0
				if d != nil {
					r = campaign.Delivery(*d).Rank()
				}
				if r < rung[i] {
					t.Errorf("row %d went down the ladder: rank %d after %d", i, r, rung[i])
				}
				rung[i] = r
			}
		}
	}()
	var (
		applied, statuses atomic.Int64
		drains            sync.WaitGroup
	)
	for _, host := range hosts {
		drains.Add(1)
		go func() {
			defer drains.Done()
			for {
				rep, err := s.h.Drain(t.Context(), host, batch)
				if err != nil {
					t.Errorf("drain: %v", err)
					return
				}
				if rep.Malformed != 0 || rep.Unmatched != 0 {
					t.Errorf("drain: %+v; want every status matched", rep)
				}
				applied.Add(int64(rep.Bodies))
				statuses.Add(int64(rep.Statuses))
				if rep.Bodies == 0 {
					return
				}
			}
		}()
	}
	drains.Wait()
	stop()
	watch.Wait()
	if applied.Load() != int64(len(bodies)) || statuses.Load() != int64(len(bodies)) {
		t.Errorf("the two drains applied %d bodies, %d statuses; want each of %d once", applied.Load(), statuses.Load(), len(bodies))
	}
	if n := CountRows(t, hosts[1], `SELECT count(*) FROM webhook_inbox WHERE applied_at IS NULL`); n != 0 {
		t.Errorf("%d bodies left unapplied", n)
	}
	if n := CountRows(t, hosts[1], `SELECT count(*) FROM message_statuses`); n != len(bodies) {
		t.Errorf("%d statuses kept, want %d", n, len(bodies))
	}
	for i, cl := range cs {
		if got := deliveryOf(t, hosts[1], cl.Message.ID); got != campaign.DeliveryRead {
			t.Errorf("row %d: delivery %q, want read", i, got)
		}
	}
	n := CountRows(t, hosts[0], `SELECT count(*) FROM messages WHERE campaign_id = ? AND delivered_at = ? AND read_at = ?`,
		c.ID, at(3*time.Second).UnixNano(), at(4*time.Second).UnixNano())
	if n != rows {
		t.Errorf("%d rows delivered and read at the webhooks' times, want %d", n, rows)
	}
}
