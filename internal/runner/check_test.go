package runner_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/runner"
)

// TestCheckEachStreams: CheckEach keeps only the first skipped rows it is
// asked to, counts them all, and hands every one to each in file order —
// which a Report writes out whole.
func TestCheckEachStreams(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone,name\n")
	for i := range 100 {
		if i%3 == 0 {
			fmt.Fprintf(&b, "+49151%08d,P\n", 10000000+i)
		} else {
			fmt.Fprintf(&b, "bad %d,P\n", i)
		}
	}
	path := filepath.Join(t.TempDir(), "skipped.csv")
	rep, err := runner.NewReport(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "t", Lang: "en", Params: []string{"name"}}
	var lines []int
	sum, err := runner.CheckEach(t.Context(), strings.NewReader(b.String()), "list.csv", spec, runner.ReadOptions{}, nil, 5,
		func(k campaign.Skip) error {
			lines = append(lines, k.Line)
			return rep.Add(k)
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Commit(); err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 100 || sum.Valid != 34 || len(sum.Skipped) != 5 || sum.Skipped[0].Line != 3 {
		t.Errorf("summary: %d rows, %d valid, %d kept skips %v", sum.Rows, sum.Valid, len(sum.Skipped), sum.Skipped)
	}
	if len(lines) != 66 || lines[0] != 3 || lines[65] != 100 {
		t.Errorf("each saw %d rows, lines %v", len(lines), lines)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 67 || strings.Join(recs[0], ",") != "line,input,reason" || recs[1][0] != "3" || recs[1][1] != "bad 1" {
		t.Errorf("report: %d records, first %q, %v", len(recs), recs[:min(2, len(recs))], err)
	}
}
