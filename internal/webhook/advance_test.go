package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/storetest"
)

// TestPlainAdvancesMatchOneByOne holds the set-based settling of plain
// statuses to applying every status one by one (the careful pass, which
// never takes the batch path): the same random mixes of sent, delivered,
// read and failed statuses — duplicates, statuses out of order, rows in
// flight, rows whose answer never came, wamids of no row, statuses found
// only by their callback data, batches of several bodies — leave the same
// rows, kept statuses, counts and report.
func TestPlainAdvancesMatchOneByOne(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			const rows = 24
			var (
				got  [2]string
				reps [2]campaign.ApplyReport
			)
			for k, careful := range []bool{false, true} {
				f := newFixture(t, rows, Policy{})
				for i := range rows {
					switch i % 6 {
					case 4:
						f.record(t, i, campaign.Outcome{Kind: campaign.OutcomeUnknown, Error: "connection reset", Class: "ambiguous"})
					case 5: // in flight: its statuses wait
					default:
						f.sent(t, i)
					}
				}
				r := rand.New(rand.NewPCG(seed, 7))
				for round := range 4 {
					var bodies [][]byte
					for range 40 {
						bodies = append(bodies, f.body(randomStatuses(r, rows)...))
					}
					if err := f.st.AddToInbox(t.Context(), bodies); err != nil {
						t.Fatal(err)
					}
					for {
						rep, err := drain(t.Context(), f.st, 16, f.ap.rules, careful)
						if err != nil {
							t.Fatal(err)
						}
						reps[k].Add(rep)
						if rep.Bodies == 0 {
							break
						}
					}
					if round == 1 { // the rows in flight are recorded half-way
						for i := 5; i < rows; i += 6 {
							f.sent(t, i)
						}
					}
				}
				if err := storetest.CheckCounts(t.Context(), f.st.Reader()); err != nil {
					t.Fatal(err)
				}
				got[k] = dumpDelivery(t, f)
			}
			if got[0] != got[1] {
				t.Errorf("batched:\n%s\none by one:\n%s", got[0], got[1])
			}
			if !reflect.DeepEqual(reps[0], reps[1]) {
				t.Errorf("batched report %+v, one by one %+v", reps[0], reps[1])
			}
			if reps[0].Advanced == 0 || reps[0].Duplicates == 0 || reps[0].Failed+reps[0].Rescheduled == 0 {
				t.Errorf("report %+v: the mix should advance, repeat and fail statuses", reps[0])
			}
		})
	}
}

// randomStatuses are one body's statuses: mostly Meta's ladder of a row,
// sometimes a failure, a wamid of no row, or only the callback data.
func randomStatuses(r *rand.Rand, rows int) []status {
	var sts []status
	for range 1 + r.IntN(2) {
		s := status{row: r.IntN(rows), at: time.Duration(r.IntN(60)) * time.Second}
		switch p := r.IntN(20); {
		case p < 5:
			s.status = "sent"
		case p < 10:
			s.status = "delivered"
		case p < 15:
			s.status = "read"
		case p < 17:
			s.status, s.code, s.title = "failed", []int{131026, 131049}[r.IntN(2)], "not delivered"
		case p < 18:
			s.status, s.wamid = "delivered", "wamid.stranger"+fmt.Sprint(r.IntN(3))
		default:
			// The send's answer never reached the database: only the
			// callback data names the row.
			s.status, s.wamid = []string{"sent", "delivered", "read"}[r.IntN(3)], "wamid.other"+fmt.Sprint(s.row)
		}
		sts = append(sts, s)
	}
	return sts
}

// dumpDelivery is every row's sending and delivery state and every kept
// status, as text.
func dumpDelivery(t *testing.T, f *fixture) string {
	t.Helper()
	var b strings.Builder
	for _, c := range f.claims {
		fmt.Fprintf(&b, "%+v\n", readDelivery(t, f.st, c.Message.ID))
	}
	rows, err := f.st.Reader().QueryContext(context.Background(), `SELECT wamid, status, at, coalesce(message_id, 0), applied,
		coalesce(error_code, 0), received_at FROM message_statuses ORDER BY wamid, status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			wamid, status               string
			at, id, applied, code, recv int64
		)
		if err := rows.Scan(&wamid, &status, &at, &id, &applied, &code, &recv); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, wamid, status, at, id, applied, code, recv)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
