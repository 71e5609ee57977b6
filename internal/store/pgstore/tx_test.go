package pgstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wasend/wasend/internal/pgtest"
)

// TestInTxAgainOnLostConnection: a transaction whose session the server
// ended before the commit (as idle_in_transaction_session_timeout ends a
// stopped host's) runs again from the start on another connection, and
// only its second run stays; an error of fn's own is not run again.
func TestInTxAgainOnLostConnection(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, pgtest.Start(t).NewDB(t, ""), Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	set := func(tx pgx.Tx, v string) error {
		_, err := tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES ('probe', $1)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, v)
		return err
	}
	runs := 0
	err = st.inTx(ctx, func(tx pgx.Tx) error {
		runs++
		if err := set(tx, fmt.Sprint("run ", runs)); err != nil {
			return err
		}
		if runs == 1 {
			var pid int
			if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return err
			}
			if _, err := st.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
				t.Fatal(err)
			}
		}
		_, err := tx.Exec(ctx, `SELECT 1`)
		return err
	})
	if err != nil {
		t.Fatalf("inTx: %v", err)
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
	if v, err := st.setting(ctx, st.pool, "probe"); err != nil || v != "run 2" {
		t.Errorf("probe = %q, %v; want the second run's", v, err)
	}

	mine := errors.New("refused")
	runs = 0
	err = st.inTx(ctx, func(tx pgx.Tx) error {
		runs++
		if err := set(tx, "refused run"); err != nil {
			return err
		}
		return mine
	})
	if !errors.Is(err, mine) || runs != 1 {
		t.Errorf("fn's own error: %v after %d runs, want it after 1", err, runs)
	}
	if v, _ := st.setting(ctx, st.pool, "probe"); v != "run 2" {
		t.Errorf("probe = %q after a refused run, want it unchanged", v)
	}
}
