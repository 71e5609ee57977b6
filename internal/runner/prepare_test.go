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
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/storetest"
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
		st, err := store.Open(ctx, db, driver.Options{}) // one store per "process"
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
			st, err := store.Open(t.Context(), filepath.Join(dir, "w.db"), driver.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en", Params: []string{"name"}}
			_, err = runner.Prepare(t.Context(), runner.Options{Store: st, File: file, Spec: spec})
			if !errors.Is(err, runner.ErrNothingToSend) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant ErrNothingToSend saying %q", err, tt.want)
			}
			if cs, err := readmodel.New(st).Campaigns(t.Context()); err != nil || len(cs) != 0 {
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

// TestPrepareContinuesOverlap: a list continues the unfinished campaign
// with its message that holds most of its numbers, and a number already in
// any unfinished campaign with that message is never added again.
func TestPrepareContinuesOverlap(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(dir, "w.db"), driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en", Params: []string{"name"}}
	prepare := func(name string, numbers ...int) runner.Result {
		t.Helper()
		var b strings.Builder
		b.WriteString("phone,name\n")
		for _, n := range numbers {
			fmt.Fprintf(&b, "+4915100000%03d,P\n", n)
		}
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := runner.Prepare(t.Context(), runner.Options{Store: st, File: file, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if a := prepare("a.csv", 1, 2, 3); !a.Imported || a.Campaign.ID != 1 {
		t.Fatalf("a.csv: %+v", a)
	}
	if b := prepare("b.csv", 10, 11, 12); !b.Imported || b.Campaign.ID != 2 {
		t.Fatalf("b.csv (other numbers): %+v, want campaign 2", b)
	}
	tests := []struct {
		file           string
		numbers        []int
		want           int64
		added, already int
	}{
		{"a2.csv", []int{3, 2, 1, 4}, 1, 1, 3},     // a.csv reordered, one more: campaign 1
		{"mix.csv", []int{1, 10, 11, 20}, 2, 1, 3}, // mostly b: campaign 2 gets 20, and not 1
		{"tie.csv", []int{2, 12, 30}, 2, 1, 2},     // a tie: the newest
	}
	for _, tt := range tests {
		res := prepare(tt.file, tt.numbers...)
		if !res.Continued || res.Campaign.ID != tt.want || res.Added != tt.added || res.Already != tt.already {
			t.Errorf("%s: continued %v campaign %d, added %d, already %d; want campaign %d, %d, %d",
				tt.file, res.Continued, res.Campaign.ID, res.Added, res.Already, tt.want, tt.added, tt.already)
		}
	}
	cs, err := readmodel.New(st).Campaigns(t.Context())
	if err != nil || len(cs) != 2 {
		t.Fatalf("campaigns = %+v, %v; want 2", cs, err)
	}
	seen := map[string]int64{}
	for _, c := range cs {
		err := readmodel.New(st).ExportMessages(t.Context(), c.ID, "", func(m readmodel.ExportRow) error {
			if other, dup := seen[m.Phone]; dup {
				t.Errorf("%s in campaigns %d and %d", m.Phone, other, c.ID)
			}
			seen[m.Phone] = c.ID
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 9 {
		t.Errorf("%d numbers stored, want 9: %v", len(seen), seen)
	}
	// The rows moved into a continued campaign are counted where status reads.
	if err := storetest.CheckCounts(t.Context(), st.Reader()); err != nil {
		t.Error(err)
	}
}
