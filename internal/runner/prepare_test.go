package runner_test

import (
	"context"
	"errors"
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

// TestPrepareNothingToSend: a header-only or all-invalid file makes no
// campaign and says why (issue 10 §5).
func TestPrepareNothingToSend(t *testing.T) {
	tests := []struct {
		name string
		csv  string
		want string
	}{
		{"header only", "phone,name\n", "list.csv: no recipient to send to: the file has no data rows, only a header; nothing stored"},
		{"header and blank lines", "phone,name\r\n\r\n\r\n", "the file has no data rows"},
		{"all invalid", "phone,name\n12,A\n+4915112345678,\nnot a number,C\n",
			"list.csv: no recipient to send to: all 3 rows were skipped (3 invalid; first: line 2: "},
		{"one invalid row", "phone,name\nx,A\n", "all 1 rows were skipped (1 invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "list.csv")
			if err := os.WriteFile(file, []byte(tt.csv), 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(t.Context(), filepath.Join(dir, "w.db"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en", Params: []string{"name"}}
			_, err = runner.Prepare(t.Context(), runner.Options{Store: st, File: file, Spec: spec})
			if !errors.Is(err, runner.ErrNothingToSend) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant ErrNothingToSend saying %q", err, tt.want)
			}
			if cs, err := st.Campaigns(t.Context()); err != nil || len(cs) != 0 {
				t.Errorf("campaigns = %+v, %v; want none", cs, err)
			}
			// The next campaign still gets number 1.
			if err := os.WriteFile(file, []byte("phone,name\n+4915112345678,A\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := runner.Prepare(t.Context(), runner.Options{Store: st, File: file, Spec: spec})
			if err != nil || res.Campaign.ID != 1 || !res.Imported {
				t.Errorf("next import: %+v, %v", res.Campaign, err)
			}
		})
	}
}
