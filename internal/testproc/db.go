package testproc

import (
	"database/sql"
	"fmt"
	"strings"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3" // the driver the read-only queries open the database with

	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/pgstore"
)

// Query runs q on the database opened read-only, calling scan for every
// row. It opens and closes its own connection so the test never holds a
// lock that the processes under test wait for.
// On Postgres (Reader set) it reads through Reader, q's ? placeholders
// numbered as Postgres wants them.
func (w *World) Query(q string, scan func(*sql.Rows) error, args ...any) {
	w.T.Helper()
	db := w.Reader
	if db == nil {
		var err error
		if db, err = sql.Open("sqlite3", "file:"+w.DB+"?mode=ro&_busy_timeout=10000"); err != nil {
			w.T.Fatal(err)
		}
		defer db.Close()
	} else {
		q = numbered(q)
	}
	rs, err := db.Query(q, args...)
	if err != nil {
		w.T.Fatalf("query %q: %v", q, err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			w.T.Fatalf("query %q: %v", q, err)
		}
	}
	if err := rs.Err(); err != nil {
		w.T.Fatalf("query %q: %v", q, err)
	}
}

// numbered is q with its ? placeholders written $1, $2, … (Postgres).
func numbered(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Row is one message as wasend's database holds it.
type Row struct {
	ID, CampaignID    int64
	Phone, State      string
	WAMID             string
	PhoneNumberID     string // of the account that last claimed it
	ErrorCode         int
	ErrorMessage      string
	Attempts, Retries int
}

// Rows returns every message of every campaign, in id order.
func (w *World) Rows() []Row {
	w.T.Helper()
	var out []Row
	w.Query(`SELECT m.id, m.campaign_id, m.phone, m.state, coalesce(m.wamid, ''), coalesce(a.phone_number_id, ''),
			coalesce(m.error_code, 0), coalesce(m.error_message, ''), m.attempts, m.retries
		FROM messages m LEFT JOIN accounts a ON a.id = m.account_id ORDER BY m.id`,
		func(rs *sql.Rows) error {
			var r Row
			err := rs.Scan(&r.ID, &r.CampaignID, &r.Phone, &r.State, &r.WAMID, &r.PhoneNumberID,
				&r.ErrorCode, &r.ErrorMessage, &r.Attempts, &r.Retries)
			out = append(out, r)
			return err
		})
	return out
}

// States counts rows by state.
func States(rows []Row) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		n[r.State]++
	}
	return n
}

// AttemptClasses returns, per message id, the classes of its attempts in
// order ("" for an attempt without a recorded outcome).
func (w *World) AttemptClasses() map[int64][]string {
	w.T.Helper()
	out := map[int64][]string{}
	w.Query(`SELECT message_id, coalesce(class, '') FROM attempts ORDER BY id`, func(rs *sql.Rows) error {
		var id int64
		var class string
		err := rs.Scan(&id, &class)
		out[id] = append(out[id], class)
		return err
	})
	return out
}

// Claims returns every token wasend took for a request, in the order it
// was claimed, as a record of what the request would carry: its callback
// data, its account's phone number id, and claimed_at as At. Claims the
// engine put back unsent (class not-sent: their account had just been
// throttled or dropped, or the campaign paused) made no request and are
// left out.
func (w *World) Claims() []sandbox.Record {
	w.T.Helper()
	var out []sandbox.Record
	w.Query(`SELECT 'wasend:c' || m.campaign_id || ':m' || m.id, a.phone_number_id, t.claimed_at
		FROM attempts t JOIN accounts a ON a.id = t.account_id JOIN messages m ON m.id = t.message_id
		WHERE coalesce(t.class, '') <> 'not-sent' ORDER BY t.id`,
		func(rs *sql.Rows) error {
			var r sandbox.Record
			var ns int64
			err := rs.Scan(&r.CallbackData, &r.PhoneNumberID, &ns)
			r.At = time.Unix(0, ns)
			out = append(out, r)
			return err
		})
	return out
}

// WriteLockFree reports whether a write transaction can start on the
// database within wait: false while a process holds SQLite's one write
// lock for longer (one stopped with SIGSTOP inside its transaction).
func (w *World) WriteLockFree(wait time.Duration) bool {
	w.T.Helper()
	db, err := sql.Open("sqlite3", fmt.Sprintf("file:%s?_busy_timeout=%d&_txlock=immediate", w.DB, wait.Milliseconds()))
	if err != nil {
		w.T.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return false
	}
	tx.Rollback()
	return true
}

// StopOutsideWrite stops p with SIGSTOP at a moment it holds no write
// transaction: SQLite has one writer, and a process stopped inside its
// transaction stalls every other one for its busy timeout, then fails
// their writes. When the write lock stays held once p is stopped, p is
// continued and stopped again a moment later. It returns how many stops
// it took.
func (w *World) StopOutsideWrite(p *Proc) int {
	w.T.Helper()
	for tries := 1; ; tries++ {
		p.Signal(w.T, syscall.SIGSTOP)
		if w.WriteLockFree(300 * time.Millisecond) {
			return tries
		}
		if tries == 20 {
			w.T.Fatalf("wasend %s held the database's write lock at each of %d stops", strings.Join(p.args, " "), tries)
		}
		p.Signal(w.T, syscall.SIGCONT)
		time.Sleep(time.Duration(tries) * 7 * time.Millisecond)
	}
}

// UsePostgres moves w to the Postgres database at dsn (a fresh one from
// pgtest): every process started after gets it as --db, and Query and
// CheckCounts read it through pgstore's Reader, open until the test ends.
func (w *World) UsePostgres(dsn string) {
	w.T.Helper()
	st, err := pgstore.Open(w.T.Context(), dsn, pgstore.Options{})
	if err != nil {
		w.T.Fatal(err)
	}
	w.T.Cleanup(func() { st.Close() })
	w.DB, w.Reader = dsn, st.Reader()
}
