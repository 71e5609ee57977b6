package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/gocarina/gocsv"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
)

// Summary is what reading a recipient file found.
type Summary struct {
	Rows       int             // data records read
	Valid      int             // recipients that would be (or were) messaged
	Invalid    []ReasonCount   // unusable rows by reason, most frequent first
	Duplicates int             // numbers already listed earlier in the file
	Suppressed int             // numbers on the suppression list
	Skipped    []campaign.Skip // every row not used, in file order
	// Zones counts the valid rows by their time zones (comma-separated
	// IANA names) when ReadOptions.Schedule has a send window.
	Zones map[string]int
}

// ReasonCount is how many rows were skipped for one reason.
type ReasonCount struct {
	Reason string
	Rows   int
}

// Summarize groups skipped rows by reason. valid is the number of rows used.
func Summarize(valid int, skipped []campaign.Skip) Summary {
	s := Summary{Rows: valid + len(skipped), Valid: valid, Skipped: skipped}
	counts := map[string]int{}
	for _, k := range skipped {
		switch {
		case strings.HasPrefix(k.Reason, "duplicate"):
			s.Duplicates++
		case strings.HasPrefix(k.Reason, "suppressed"):
			s.Suppressed++
		default:
			counts[k.Reason]++
		}
	}
	for r, n := range counts {
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

// SuppressedFunc says whether a number is on the suppression list, and why.
type SuppressedFunc func(ctx context.Context, phone string) (reason string, ok bool, err error)

// Check reads a recipient file as an import would — same parsing,
// normalisation, parameter checks, de-duplication and suppression list —
// without storing or sending anything.
func Check(ctx context.Context, r io.Reader, file string, spec campaign.Spec, ro ReadOptions, suppressed SuppressedFunc) (Summary, error) {
	opts := ro.recipients(spec)
	opts.FindDuplicates = true
	rd, err := recipients.Open(r, file, opts)
	if err != nil {
		return Summary{}, err
	}
	rows := recipients.Parallel(rd, runtime.GOMAXPROCS(0))
	defer rows.Close()
	var (
		valid   int
		skipped []campaign.Skip
		zones   map[string]int
		finder  *zoneFinder
	)
	if ro.Schedule.Window != nil {
		zones, finder = map[string]int{}, newZoneFinder(ro.Schedule, time.Now())
	}
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return Summary{}, ctx.Err()
		}
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var rowErr *recipients.RowError
		if errors.As(err, &rowErr) {
			skipped = append(skipped, campaign.Skip{Line: rowErr.Line, Input: rowErr.Value, Reason: rowReason(rowErr)})
			continue
		}
		if err != nil {
			return Summary{}, err
		}
		if row.DuplicateOf != 0 {
			skipped = append(skipped, campaign.Skip{Line: row.Line, Input: row.Input,
				Reason: fmt.Sprintf("duplicate of line %d (%s)", row.DuplicateOf, row.Phone)})
			continue
		}
		if why := ro.recentlyContacted(row.Phone); why != "" {
			skipped = append(skipped, campaign.Skip{Line: row.Line, Input: row.Input, Reason: why})
			continue
		}
		if suppressed != nil {
			why, ok, err := suppressed(ctx, row.Phone)
			if err != nil {
				return Summary{}, err
			}
			if ok {
				if why == "" {
					why = "opted out"
				}
				skipped = append(skipped, campaign.Skip{Line: row.Line, Input: row.Input, Reason: "suppressed: " + why})
				continue
			}
		}
		if finder != nil {
			z, err := finder.of(row)
			if err != nil {
				skipped = append(skipped, campaign.Skip{Line: row.Line, Input: row.Input, Reason: err.Error()})
				continue
			}
			zones[z]++
		}
		valid++
	}
	sum := Summarize(valid, skipped)
	sum.Zones = zones
	return sum, nil
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
