package pgstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/store/driver"
)

// A claim's look-up of the send log is planned with its phones at every
// call, also in a session that has looked up many times: a generic plan,
// made while the log held a few rows, would scan the grown log comparing
// every row with every phone.
func TestLastContactsPlannedWithItsPhones(t *testing.T) {
	ctx := t.Context()
	// One connection: every claim below is one session's, as a host's.
	st, err := Open(ctx, pgtest.Start(t).NewDB(t, "")+"&pool_max_conns=1", Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := st.AddAccount(ctx, campaign.Account{Name: "a", PhoneNumberID: "pn-a", Tier: campaign.TierActive, TokenEnv: "T"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.pool.Exec(ctx, `INSERT INTO contact_log (account_id, phone, last_at)
		SELECT $1, format('+4915%s', lpad(i::text, 8, '0')), 1 FROM generate_series(1, 20) i`, a.ID); err != nil {
		t.Fatal(err)
	}
	for n := range 8 { // past the five custom plans after which Postgres may keep a generic one
		var generic int64
		err := st.WithClaim(ctx, func(ct driver.ClaimTx) error {
			c := ct.(*claimTx)
			lc, err := c.LastContacts(ctx, []string{fmt.Sprintf("+4915%08d", n+1), "+491599999999"})
			if err != nil {
				return err
			}
			if len(lc) != 1 {
				return fmt.Errorf("found %d of the phones, want 1", len(lc))
			}
			return c.QueryRow(ctx, `SELECT coalesce(sum(generic_plans), 0) FROM pg_prepared_statements
				WHERE statement LIKE 'SELECT contact_log.phone, contact_log.account_id, contact_log.last_at, greatest(%'`).Scan(&generic)
		})
		if err != nil {
			t.Fatal(err)
		}
		if generic > 0 {
			t.Fatalf("look-up %d ran on a generic plan (%d times)", n+1, generic)
		}
	}
}
