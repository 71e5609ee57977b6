package webhook

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/claim"
	"github.com/wasend/wasend/internal/store/storetest"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/clock"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
)

// t0 is when every test's sending happens; webhook times are offsets.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// pnid is the sending number of every test, Meta's example id.
const pnid = "106540352242922"

// fixture is a real SQLite database with one account and one campaign of
// n recipients, every row claimed (in flight) by runner "r1".
type fixture struct {
	st     *store.Store
	clk    *clock.Sim
	c      campaign.Campaign
	claims []campaign.Claim
	ap     *Applier
	path   string // the database file
}

func newFixture(t testing.TB, n int, p Policy) *fixture {
	t.Helper()
	to := make([]string, n)
	for i := range to {
		to[i] = phone(i)
	}
	return newFixtureOf(t, to, p)
}

// newFixtureOf is newFixture with the rows' recipients given (numbers or
// business-scoped user ids).
func newFixtureOf(t testing.TB, to []string, p Policy) *fixture {
	t.Helper()
	n := len(to)
	clk := clock.NewSim(t0)
	path := filepath.Join(t.TempDir(), "wasend.db")
	st, err := store.Open(t.Context(), path, driver.Options{Now: clk.Now, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SetTier(t.Context(), campaign.TierNew, campaign.Limits{Rate: 1e6, Burst: 1e6, DailyCap: 1e9}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAccount(t.Context(), campaign.Account{Name: "main", PhoneNumberID: pnid, Tier: campaign.TierNew, TokenEnv: "WA_TOKEN"}); err != nil {
		t.Fatal(err)
	}
	im, err := st.Import(t.Context(), campaign.Campaign{Name: "spring", Fingerprint: "fp", Source: "spring.csv",
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "spring_sale", Lang: "en_US"}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	for i := range n {
		if reason, err := im.Add(t.Context(), campaign.Message{Line: i + 2, Input: to[i], Phone: to[i]}); err != nil || reason != "" {
			t.Fatalf("add %d: %q %v", i, reason, err)
		}
	}
	c, err := im.Commit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A number takes 80 msg/s (Meta's default throughput) whatever its
	// tier, so a fixture of more rows claims them over several seconds.
	var claims []campaign.Claim
	for at := t0; len(claims) < n; at = at.Add(time.Second) {
		cs, err := claim.New(st).ClaimN(t.Context(), c.ID, "r1", at, min(n-len(claims), 80))
		if err != nil {
			t.Fatalf("claim: %d, %v", len(claims), err)
		}
		claims = append(claims, cs...)
	}
	return &fixture{st: st, clk: clk, c: c, claims: claims, ap: NewApplier(st, p, nil, nil), path: path}
}

func phone(i int) string { return fmt.Sprintf("+1650555%04d", i) }

// row i's wamid as the Cloud API would have answered.
func wamid(i int) string { return "wamid.row" + strconv.Itoa(i) }

func (f *fixture) record(t *testing.T, i int, o campaign.Outcome) {
	t.Helper()
	if err := f.st.RecordAll(t.Context(), "r1", []campaign.Result{{Claim: f.claims[i], Outcome: o, At: f.clk.Now()}}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) sent(t *testing.T, i int) {
	f.record(t, i, campaign.Outcome{Kind: campaign.OutcomeSent, WAMID: wamid(i), Class: "ok"})
}

func (f *fixture) msg(t *testing.T, i int) messageDelivery {
	t.Helper()
	return readDelivery(t, f.st, f.claims[i].Message.ID)
}

// messageDelivery is one row's sending and delivery state.
type messageDelivery struct {
	State         campaign.State
	WAMID         string
	Delivery      campaign.Delivery // "" before any status webhook
	DeliveredAt   time.Time
	ReadAt        time.Time
	ErrorCode     int
	Error         string
	NextAttemptAt time.Time
	FailedAfter   bool // failed by a status webhook
}

// readDelivery reads message id's state from the database.
func readDelivery(t *testing.T, st *store.Store, id int64) messageDelivery {
	t.Helper()
	var (
		d                   messageDelivery
		delivered, read     sql.NullInt64
		next                int64
		wamid, del, message sql.NullString
		code                sql.NullInt64
	)
	err := st.Reader().QueryRowContext(t.Context(), `SELECT state, wamid, delivery, delivered_at, read_at, error_code, error_message,
		next_attempt_at, failed_after_send FROM messages WHERE id = ?`, id).
		Scan(&d.State, &wamid, &del, &delivered, &read, &code, &message, &next, &d.FailedAfter)
	if err != nil {
		t.Fatalf("message %d: %v", id, err)
	}
	d.WAMID, d.Delivery, d.Error = wamid.String, campaign.Delivery(del.String), message.String
	d.ErrorCode = int(code.Int64)
	d.DeliveredAt, d.ReadAt, d.NextAttemptAt = unixNanos(delivered), unixNanos(read), unixNanos(sql.NullInt64{Int64: next, Valid: true})
	return d
}

// unixNanos reads the store's instants: Unix nanoseconds, 0 or NULL for
// none.
func unixNanos(n sql.NullInt64) time.Time {
	if !n.Valid || n.Int64 == 0 {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

// deliver stores bodies in the inbox and drains it, as the receiver and
// applier do.
func (f *fixture) deliver(t *testing.T, bodies ...[]byte) campaign.ApplyReport {
	t.Helper()
	if err := f.st.AddToInbox(t.Context(), bodies); err != nil {
		t.Fatal(err)
	}
	rep, err := f.ap.Drain(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The delivery counts status reads are kept as the rows move.
	if err := storetest.CheckCounts(t.Context(), f.st.Reader()); err != nil {
		t.Fatal(err)
	}
	return rep
}

// status is one entry of statuses[] for row i of the fixture.
type status struct {
	row    int
	status string
	at     time.Duration // after t0
	code   int           // failed only
	title  string
	noCB   bool // sent without biz_opaque_callback_data
	wamid  string
}

func (f *fixture) body(sts ...status) []byte {
	var list []map[string]any
	for _, s := range sts {
		id := s.wamid
		if id == "" {
			id = wamid(s.row)
		}
		m := map[string]any{
			"id": id, "status": s.status, "timestamp": strconv.FormatInt(t0.Add(s.at).Unix(), 10),
			"recipient_id": phone(s.row)[1:],
		}
		if !s.noCB {
			m["biz_opaque_callback_data"] = campaign.CallbackData(f.c.ID, f.claims[s.row].Message.ID)
		}
		if s.status != "failed" {
			m["pricing"] = map[string]any{"billable": true, "pricing_model": "PMP", "category": "marketing", "type": "regular"}
		} else {
			m["errors"] = []map[string]any{{"code": s.code, "title": s.title, "message": s.title,
				"error_data": map[string]any{"details": s.title}, "href": "/docs/whatsapp/cloud-api/support/error-codes/"}}
		}
		list = append(list, m)
	}
	return envelope("messages", map[string]any{
		"messaging_product": "whatsapp",
		"metadata":          map[string]any{"display_phone_number": "15550783881", "phone_number_id": pnid},
		"statuses":          list,
	})
}

func envelope(field string, value any) []byte {
	b, err := json.Marshal(map[string]any{
		"object": "whatsapp_business_account",
		"entry":  []any{map[string]any{"id": "102290129340398", "changes": []any{map[string]any{"field": field, "value": value}}}},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// isSuppressed reports whether phone is on the suppression list.
func isSuppressed(t *testing.T, st *store.Store, phone string) (bool, error) {
	why, err := readmodel.New(st).SuppressedIn(t.Context(), []string{phone})
	_, ok := why[phone]
	return ok, err
}

// backlog counts the bodies stored and not applied yet, read from the
// database file on a connection of its own (product code never needs it).
func (f *fixture) backlog(t testing.TB) (int, error) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+f.path+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM webhook_inbox WHERE applied_at IS NULL`).Scan(&n)
	return n, err
}
