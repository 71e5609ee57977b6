package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/gocarina/gocsv"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/screen"
)

// Summary is what reading a recipient file found.
type Summary struct {
	Rows       int             // data records read
	Valid      int             // recipients that would be (or were) messaged
	Invalid    []ReasonCount   // unusable rows by reason, most frequent first
	Duplicates int             // numbers already listed earlier in the file
	Suppressed int             // numbers on the suppression list
	Contacted  int             // numbers sent to recently: --skip-contacted-within, or the same template within 24 h
	Skipped    []campaign.Skip // every row not used, in file order
}

// ReasonCount is how many rows were skipped for one reason.
type ReasonCount struct {
	Reason string
	Rows   int
}

// Summarize groups skipped rows by kind, and invalid ones by reason. valid
// is the number of rows used.
func Summarize(valid int, skipped []campaign.Skip) Summary {
	t := newTally(-1)
	t.add(skipped)
	return t.summary(valid)
}

func (t *tally) summary(valid int) Summary {
	s := Summary{Rows: valid + t.rows, Valid: valid, Skipped: t.first, Duplicates: t.duplicates,
		Suppressed: t.suppressed, Contacted: t.contacted + t.sameTemplate}
	for r, n := range t.invalidBy {
		s.Invalid = append(s.Invalid, ReasonCount{r, n})
	}
	sort.Slice(s.Invalid, func(i, j int) bool {
		if s.Invalid[i].Rows != s.Invalid[j].Rows {
			return s.Invalid[i].Rows > s.Invalid[j].Rows
		}
		return s.Invalid[i].Reason < s.Invalid[j].Reason
	})
	return s
}

// Check reads a recipient file as an import would — the same parsing,
// normalisation, parameter checks and screening (internal/screen: the
// duplicates, the suppression list and the recent sends of lists) —
// without storing or sending anything. lists may be nil: then only invalid
// rows and duplicates are found.
func Check(ctx context.Context, r io.Reader, file string, spec campaign.Spec, ro ReadOptions, lists screen.Lists) (Summary, error) {
	rd, err := recipients.Open(r, file, ro.recipients(spec))
	if err != nil {
		return Summary{}, err
	}
	scr, err := screen.New(ctx, ro.screen(spec, lists, nil))
	if err != nil {
		return Summary{}, err
	}
	t := newTally(-1)
	err = screenRows(ctx, rd, file, scr, func(_ []recipients.Row, _ []screen.Verdict, skips []campaign.Skip) error {
		t.add(skips)
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	return t.summary(scr.Kept), nil
}

// reportRow is one line of a --report file.
type reportRow struct {
	Line   int    `csv:"line"`
	Input  string `csv:"input"`
	Reason string `csv:"reason"`
}

// WriteReport writes every skipped row, with its line and reason, as CSV to
// path — atomically, so a reader never sees half a report.
func WriteReport(path string, skipped []campaign.Skip) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wasend-report-*.csv")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	rows := make([]reportRow, len(skipped))
	for i, k := range skipped {
		rows[i] = reportRow{k.Line, k.Input, k.Reason}
	}
	if err := gocsv.Marshal(rows, tmp); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}
