package readmodel_test

import (
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// LastInbound, as an import screens the window by it: the latest message
// to any number, found under the row's key or an id linked to it — a
// person known by a user id who wrote from the linked number has written,
// and the reverse; one nobody linked is looked up as is.
func TestLastInboundFollowsLinks(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, newFakeClock())
		ctx := t.Context()
		if err := st.WithInbox(ctx, func(tx driver.InboxTx, now time.Time) error {
			for i, r := range []campaign.InboundRow{
				{Phone: "+4915100000001", PhoneNumberID: "pn-a", At: at(-3 * time.Hour)},
				{Phone: "+4915100000001", PhoneNumberID: "pn-b", At: at(-time.Hour)},
				{Phone: "US.2", PhoneNumberID: "pn-a", At: at(-2 * time.Hour)},
				{Phone: "US.3", PhoneNumberID: "pn-a", At: at(-4 * time.Hour)},
			} {
				r.ID, r.ReceivedAt, r.Type = string(rune('a'+i)), r.At, "text"
				if _, err := tx.KeepInbound(ctx, r); err != nil {
					return err
				}
			}
			return tx.LearnLinks(ctx, []campaign.IdentityLink{{Phone: "+4915100000001", UserID: "US.1"},
				{Phone: "+4915100000002", UserID: "US.2"}}, now)
		}); err != nil {
			t.Fatal(err)
		}
		last, err := readmodel.New(st).LastInbound(ctx, []string{"US.1", "+4915100000002", "US.3", "+4915100000004"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Time{"US.1": at(-time.Hour), "+4915100000002": at(-2 * time.Hour), "US.3": at(-4 * time.Hour)}
		if len(last) != len(want) {
			t.Errorf("LastInbound = %v, want %v", last, want)
		}
		for k, w := range want {
			if !last[k].Equal(w) {
				t.Errorf("%s last wrote %v, want %v", k, last[k], w)
			}
		}
	})
}
