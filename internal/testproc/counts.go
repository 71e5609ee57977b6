package testproc

import (
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
)

// CheckCounts holds the counts that status reads, kept as rows move (see
// storetest.CheckCounts), equal to a recount of w's database: after a run, a
// kill -9 or anything else. when names the moment in the failure. On
// Postgres (Reader set) it recounts through Reader.
func (w *World) CheckCounts(when string) {
	w.T.Helper()
	if w.Reader != nil {
		if err := storetest.CheckCounts(w.T.Context(), w.Reader); err != nil {
			w.T.Errorf("after %s: %v", when, err)
		}
		return
	}
	st, err := store.Open(w.T.Context(), w.DB, driver.Options{})
	if err != nil {
		w.T.Fatalf("after %s: %v", when, err)
	}
	defer st.Close()
	if err := storetest.CheckCounts(w.T.Context(), st.Reader()); err != nil {
		w.T.Errorf("after %s: %v", when, err)
	}
}
