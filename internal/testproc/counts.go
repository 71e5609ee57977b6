package testproc

import (
	"github.com/wasend/wasend/internal/store"
)

// CheckCounts holds the counts that status reads, kept as rows move (see
// store.CheckCounts), equal to a recount of w's database: after a run, a
// kill -9 or anything else. when names the moment in the failure.
func (w *World) CheckCounts(when string) {
	w.T.Helper()
	st, err := store.Open(w.T.Context(), w.DB, store.Options{})
	if err != nil {
		w.T.Fatalf("after %s: %v", when, err)
	}
	defer st.Close()
	if err := st.CheckCounts(w.T.Context()); err != nil {
		w.T.Errorf("after %s: %v", when, err)
	}
}
