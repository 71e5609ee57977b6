package hostshare

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/limits/redistest"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// newTickingHost is newHost on a clock that moves a millisecond at each
// reading: links learned one after the other are learned at different
// instants, as on a real clock.
func newTickingHost(t *testing.T, srv *redistest.Server) *host {
	t.Helper()
	h := newHost(t, srv)
	h.st.Close()
	var (
		mu sync.Mutex
		n  time.Duration
	)
	st, err := store.Open(context.Background(), h.path, driver.Options{Location: time.UTC, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n += time.Millisecond
		return t0.Add(n)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st, h.sync = st, NewSync(h.shared, st, SyncOptions{})
	return h
}

// learn stores links in h's database as its webhook receiver does.
func (h *host) learn(t *testing.T, links ...campaign.IdentityLink) {
	t.Helper()
	if err := h.st.WithInbox(context.Background(), func(tx driver.InboxTx, now time.Time) error {
		return tx.LearnLinks(context.Background(), links, now)
	}); err != nil {
		t.Fatal(err)
	}
}

func (h *host) linked(t *testing.T, ids ...string) map[string][]string {
	t.Helper()
	got, err := readmodel.New(h.st).LinkedIn(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLinksReachOtherHosts: under --limits the webhooks reach one host,
// which alone learns that a number and a user id are one person. Its
// sync pushes the links, and every other host copies them, so a person
// who said STOP by their user id on the receiving host is suppressed on a
// host that sends to their number (its claim follows the links). A link
// that changes travels as changed; a Redis that lost its data gets the
// links again from the hosts that have them.
func TestLinksReachOtherHosts(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	receiver, sender := newTickingHost(t, srv), newTickingHost(t, srv)
	const ana, ben = "US.13491208655302741918", "GB.77"
	receiver.learn(t, campaign.IdentityLink{Phone: "+4915100000001", UserID: ana}, campaign.IdentityLink{Phone: "+4915100000002", UserID: ben})
	// Ana's STOP came by her user id, on the receiver (pushed from its outbox).
	if _, err := receiver.st.Suppress(ctx, []campaign.Suppression{{Phone: ana, Reason: `keyword "STOP"`}}); err != nil {
		t.Fatal(err)
	}
	if got := sender.linked(t, "+4915100000001"); len(got) != 0 {
		t.Fatalf("the sender knows links before any sync: %v", got)
	}
	receiver.pull(t)
	sender.pull(t)
	if got := sender.linked(t, "+4915100000001", ben); len(got["+4915100000001"]) != 1 || got["+4915100000001"][0] != ana ||
		len(got[ben]) != 1 || got[ben][0] != "+4915100000002" {
		t.Errorf("the sender's links after a sync: %v; want Ana's and Ben's", got)
	}

	// The sender's claim of a campaign to 0, Ana's number and Ben's fails
	// Ana's row as suppressed and sends the others.
	storetest.MustAccount(t, sender.st, "a", campaign.TierNew, storetest.Limited(100, 100, 100))
	c := storetest.MustCampaign(t, sender.st, "to numbers", 3)
	cs, err := claim.New(sender.st).ClaimN(ctx, c.ID, "r1", t0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Message.Phone != storetest.Phone(0) || cs[1].Message.Phone != storetest.Phone(2) {
		t.Errorf("the sender claimed %v; want all but Ana's number", cs)
	}
	if n := storetest.CountRows(t, sender.st, `SELECT count(*) FROM messages WHERE phone = ? AND state = 'failed' AND error_code = ?`,
		storetest.Phone(1), campaign.CodeSuppressed); n != 1 {
		t.Errorf("Ana's row by number is not failed as suppressed on the sender")
	}

	// A changed link travels changed.
	receiver.learn(t, campaign.IdentityLink{Phone: "+4915100000003", UserID: ben})
	receiver.pull(t)
	sender.pull(t)
	if got := sender.linked(t, ben); len(got[ben]) != 1 || got[ben][0] != "+4915100000003" {
		t.Errorf("Ben's link on the sender after he changed number: %v", got)
	}

	// Redis loses its data: a new host gets the links once the receiver
	// has put them up again.
	srv.Client(t).FlushAll(ctx)
	late := newTickingHost(t, srv)
	for range 3 {
		receiver.pull(t)
		sender.pull(t)
	}
	late.pull(t)
	if got := late.linked(t, ana, ben); len(got[ana]) != 1 || len(got[ben]) != 1 || got[ben][0] != "+4915100000003" {
		t.Errorf("a new host's links after Redis lost its data: %v", got)
	}
}
