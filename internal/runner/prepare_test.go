package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
)

// TestPrepareRacesOnOneFile: two processes starting the same command at
// the same moment end up on one campaign; neither fails.
func TestPrepareRacesOnOneFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.db")
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "+49151%08d,P%d\n", 10000000+i, i)
	}
	file := filepath.Join(dir, "list.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en", Params: []string{"name"}}
	var (
		wg       sync.WaitGroup
		results  [4]runner.Result
		errs     [4]error
		imported int
	)
	for i := range results {
		st, err := store.Open(ctx, db, store.Options{}) // one store per "process"
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = runner.Prepare(ctx, runner.Options{Store: st, File: file, Spec: spec})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		if results[i].Campaign.ID != results[0].Campaign.ID {
			t.Errorf("process %d on campaign %d, process 0 on %d", i, results[i].Campaign.ID, results[0].Campaign.ID)
		}
		if results[i].Imported {
			imported++
		}
	}
	if imported != 1 {
		t.Errorf("%d processes imported the file, want exactly 1", imported)
	}
}
