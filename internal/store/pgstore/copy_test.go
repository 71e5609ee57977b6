package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pgtest"
	"github.com/wasend/wasend/internal/pricing"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/pgstore"
	"github.com/wasend/wasend/internal/store/rowscan"
	"github.com/wasend/wasend/internal/ui"
	"github.com/wasend/wasend/internal/whatsapp"
)

// sandboxDB is a SQLite database as a user's would be after a real
// import and a sandbox run with its status webhooks, a suppression and a
// rate card: the file store migrate copies.
func sandboxDB(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(ctx, path, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tier := range []string{campaign.TierNew, campaign.TierWarm, campaign.TierActive} {
		if err := st.SetTier(ctx, tier, campaign.Limits{Rate: 1000, Burst: 100, DailyCap: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Suppress(ctx, []campaign.Suppression{{Phone: "+4915100000001", Reason: "asked to stop"}}); err != nil {
		t.Fatal(err)
	}
	card := pricing.Card{Currency: "USD", Effective: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), Source: "card.csv",
		Rates: map[string]map[pricing.Category]pricing.Micros{"DE": {pricing.Marketing: 136_500}}}
	if _, err := st.ImportCard(ctx, card); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	_, err = runner.Run(ctx, runner.Options{
		Store: st, IO: ui.Test(&bytes.Buffer{}, &errOut), File: "../../../testdata/recipients.csv", Location: time.UTC,
		Spec:   campaign.Spec{Kind: campaign.KindTemplate, Template: sandbox.DemoTemplate, Lang: "en_US", Params: []string{"name", "code"}},
		Region: "DE", Policy: runner.DefaultPolicy(), Timeout: 5 * time.Second, ProgressInterval: time.Hour,
		API: runner.APIConfig{Sandbox: true, Version: whatsapp.DefaultVersion}, Logger: slog.New(slog.DiscardHandler),
		Webhooks: &runner.RunWebhooks{Path: "/webhook", Sandbox: sandbox.WebhookOptions{Read: 0.5, Seed: 1},
			Secrets: func() ([]byte, string, error) { return []byte("secret"), "verify", nil }},
	})
	if err != nil {
		t.Fatalf("sandbox run: %v\n%s", err, errOut.String())
	}
	return path
}

// figures is what both drivers read of a database the same way.
type figures struct {
	Campaigns []campaign.Campaign
	Counts    []campaign.Counts
	Accounts  []campaign.AccountStatus
	Tiers     []campaign.Tier
	Zone      string
}

func readFigures(t *testing.T, d interface {
	Campaigns(context.Context) ([]campaign.Campaign, error)
	Counts(context.Context, int64) (campaign.Counts, error)
	Accounts(context.Context) ([]campaign.AccountStatus, error)
	Tiers(context.Context) ([]campaign.Tier, error)
	Location() *time.Location
}) figures {
	t.Helper()
	ctx := t.Context()
	var f figures
	var err error
	if f.Campaigns, err = d.Campaigns(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Campaigns {
		n, err := d.Counts(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.Counts = append(f.Counts, n)
	}
	if f.Accounts, err = d.Accounts(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range f.Accounts {
		// Settled at the read's time: the tables' tokens are compared by the copy.
		f.Accounts[i].At, f.Accounts[i].Tokens = time.Time{}, 0
	}
	if f.Tiers, err = d.Tiers(ctx); err != nil {
		t.Fatal(err)
	}
	f.Zone = d.Location().String()
	return f
}

// The campaign list and the tiers are read models (internal/readmodel)
// on SQLite's Reader; Postgres has no Reader yet, so its side runs the
// same queries through pgx, its campaigns read by rowscan as both drivers
// read them.
type liteReads struct{ *store.Store }

func (l liteReads) Campaigns(ctx context.Context) ([]campaign.Campaign, error) {
	return readmodel.New(l.Store).Campaigns(ctx)
}

func (l liteReads) Tiers(ctx context.Context) ([]campaign.Tier, error) {
	return readmodel.New(l.Store).Tiers(ctx)
}

type pgReads struct {
	*pgstore.Store
	dsn string
}

func (p pgReads) Campaigns(ctx context.Context) ([]campaign.Campaign, error) {
	c, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT `+rowscan.CampaignCols+` FROM campaigns ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []campaign.Campaign
	for rows.Next() {
		cp, err := rowscan.Campaign(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, rows.Err()
}

func (p pgReads) Tiers(ctx context.Context) ([]campaign.Tier, error) {
	c, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	var out []campaign.Tier
	for _, name := range campaign.TierNames {
		t := campaign.Tier{Name: name, Defaults: campaign.DefaultTiers[name]}
		if err := c.QueryRow(ctx, `SELECT rate, burst, daily_cap FROM tiers WHERE name = $1`, name).
			Scan(&t.Limits.Rate, &t.Limits.Burst, &t.Limits.DailyCap); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// TestCopyFromSQLite moves a sandbox run's database into an empty Postgres:
// every table copied with its count, the Postgres driver reading the
// campaign, its counts, the accounts and tiers as SQLite's does, new ids
// after the copied ones, kept counts following later moves; a second move
// changes nothing, and a Postgres that has moved on since is refused.
func TestCopyFromSQLite(t *testing.T) {
	ctx := t.Context()
	path := sandboxDB(t)
	dsn := pgtest.Start(t).NewDB(t, "") // not even migrated: the move does it
	rep, err := runner.MoveStore(ctx, runner.MoveStoreOptions{From: path, To: dsn})
	if err != nil {
		t.Fatalf("move: %v (%+v)", err, rep)
	}
	if rep.AlreadyCopied || !rep.Matches() {
		t.Fatalf("first move: already copied %v, matches %v: %+v", rep.AlreadyCopied, rep.Matches(), rep.Tables)
	}
	copied := map[string]int64{}
	for _, tc := range rep.Tables {
		copied[tc.Table] = tc.Copied
	}
	for _, name := range []string{"campaigns", "messages", "attempts", "accounts", "tiers", "settings", "suppressions",
		"suppression_push", "webhook_inbox", "message_statuses", "message_counts", "attempt_rollup", "contact_log",
		"pricing_cards", "pricing_rates", "templates", "recipient_links", "global_limit", "reach_counts"} {
		if copied[name] == 0 {
			t.Errorf("table %s: %d rows copied, want the run's (every table: %v)", name, copied[name], copied)
		}
	}

	lite, err := store.Open(ctx, path, driver.Options{Location: time.UTC, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	var tables []string
	rows, err := lite.Reader().QueryContext(ctx, `SELECT name FROM sqlite_master
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var reported []string
	for _, tc := range rep.Tables {
		reported = append(reported, tc.Table)
	}
	if len(tables) < 35 || !reflect.DeepEqual(reported, tables) {
		t.Errorf("tables copied\n%v\nwant every table of the file, in name order\n%v", reported, tables)
	}
	pg, err := pgstore.Open(ctx, dsn, pgstore.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	want, got := readFigures(t, liteReads{lite}), readFigures(t, pgReads{pg, dsn})
	if len(want.Campaigns) != 1 || want.Counts[0][campaign.Sent] == 0 {
		t.Fatalf("the sandbox run left %+v", want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Postgres reads\n%+v\nSQLite reads\n%+v", got, want)
	}

	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var maxID, newID int64
	if err := c.QueryRow(ctx, `SELECT max(id) FROM attempts`).Scan(&maxID); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, `INSERT INTO attempts (message_id, account_id, claimed_at, tally) SELECT message_id, account_id, claimed_at, 1 FROM attempts LIMIT 1 RETURNING id`).Scan(&newID); err != nil {
		t.Fatal(err)
	}
	if newID <= maxID {
		t.Errorf("a new attempt took id %d, not after the copied %d", newID, maxID)
	}
	if _, err := c.Exec(ctx, `DELETE FROM attempts WHERE id = $1`, newID); err != nil {
		t.Fatal(err)
	}

	again, err := runner.MoveStore(ctx, runner.MoveStoreOptions{From: path, To: dsn})
	if err != nil || !again.AlreadyCopied || !reflect.DeepEqual(again.Tables, rep.Tables) {
		t.Errorf("second move: %v, already copied %v, tables %+v; want nothing done, the same counts", err, again.AlreadyCopied, again.Tables)
	}

	// The triggers are on again: a row moving on Postgres is counted.
	if _, err := c.Exec(ctx, `UPDATE messages SET state = 'failed' WHERE id = (SELECT min(id) FROM messages WHERE state = 'sent')`); err != nil {
		t.Fatal(err)
	}
	after, err := pg.Counts(ctx, want.Campaigns[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if after[campaign.Sent] != want.Counts[0][campaign.Sent]-1 || after[campaign.Failed] != want.Counts[0][campaign.Failed]+1 {
		t.Errorf("after one sent row failed on Postgres counts are %v, were %v", after, want.Counts[0])
	}
	_, err = runner.MoveStore(ctx, runner.MoveStoreOptions{From: path, To: dsn})
	if !errors.Is(err, pgstore.ErrTargetHoldsData) || !bytes.Contains([]byte(err.Error()), []byte("table messages: 40 rows in both, not the same rows")) {
		t.Errorf("a move onto a Postgres that moved on: %v, want ErrTargetHoldsData naming the changed messages", err)
	}
}

// A new file copies into a database wasend has opened (its seeded tiers
// and zone replaced), and a second time finds its copy there. Once the
// database is used, a copy is refused before anything is written, naming
// the tables that differ.
func TestCopyRefusesAUsedDatabase(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "wasend.db")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, path, driver.Options{Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	dsn := newDB(t) // its zone of quota days is UTC
	pg, err := pgstore.Open(ctx, dsn, pgstore.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for i, wantAlready := range []bool{false, true} {
		rep, err := runner.MoveStore(ctx, runner.MoveStoreOptions{From: path, To: dsn})
		if err != nil || rep.AlreadyCopied != wantAlready || !rep.Matches() {
			t.Fatalf("move %d of a new file: %v, already copied %v, matches %v; want already copied %v",
				i+1, err, rep.AlreadyCopied, rep.Matches(), wantAlready)
		}
	}
	var zone string
	if err := pg.Reader().QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'timezone'`).Scan(&zone); err != nil || zone != "Europe/Berlin" {
		t.Errorf("zone of quota days after the copy: %q, %v; want the file's Europe/Berlin", zone, err)
	}
	if _, err := pg.Suppress(ctx, []campaign.Suppression{{Phone: "+4915100000009"}}); err != nil {
		t.Fatal(err)
	}
	_, err = runner.MoveStore(ctx, runner.MoveStoreOptions{From: path, To: dsn})
	if !errors.Is(err, pgstore.ErrTargetHoldsData) || !bytes.Contains([]byte(err.Error()), []byte("table suppressions: 0 rows in the file, 1 in Postgres")) {
		t.Errorf("move onto a used database: %v, want ErrTargetHoldsData naming suppressions", err)
	}
	var n int
	if err := pg.Reader().QueryRowContext(ctx, `SELECT count(*) FROM suppressions`).Scan(&n); err != nil || n != 1 {
		t.Errorf("suppressions after the refusal: %d, %v; want the 1 it held", n, err)
	}
}

// A Postgres URL's password is in no error.
func TestCopyErrorsHideThePassword(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(t.Context(), path, driver.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, dsn := range []string{
		"postgres://wasend:s3cret-pw@127.0.0.1:1/wasend?connect_timeout=2",
		"postgres://wasend:s3cret-pw@[::1/wasend",
	} {
		_, err := runner.MoveStore(t.Context(), runner.MoveStoreOptions{From: path, To: dsn})
		if err == nil || bytes.Contains([]byte(err.Error()), []byte("s3cret-pw")) {
			t.Errorf("move to %s: %v; want an error without the password", pgstore.Redact(dsn), err)
		}
	}
}
