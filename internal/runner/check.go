package runner

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/pricing"
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
	NoWindow   int             // a text message's numbers without an open customer service window
	Skipped    []campaign.Skip // the rows not used, in file order (all, or the first few: see CheckEach)
	// Zones counts the rows kept by their time zones (comma-separated
	// IANA names) when ReadOptions.Schedule has a send window.
	Zones map[string]int
	// Elsewhere counts the rows left to other hosts (--shard), in none
	// of the counts above.
	Elsewhere int
	// Phone is the column the numbers were read from, and the other
	// phone-like columns of the header.
	Phone recipients.PhoneColumn
	// Places counts the rows kept by where Meta bills them (check's cost
	// estimate).
	Places map[pricing.Place]int64
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
	t.byReason = true
	t.add(skipped)
	return t.summary(valid)
}

func (t *tally) summary(valid int) Summary {
	s := Summary{Rows: valid + t.rows, Valid: valid, Skipped: t.first, Duplicates: t.duplicates,
		Suppressed: t.suppressed, Contacted: t.contacted + t.sameTemplate, NoWindow: t.noWindow}
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

// Check is CheckEach keeping every skipped row in the summary.
func Check(ctx context.Context, r io.Reader, file string, spec campaign.Spec, ro ReadOptions, lists screen.Lists) (Summary, error) {
	return CheckEach(ctx, r, file, spec, ro, lists, -1, nil)
}

// CheckEach reads a recipient file as an import would — the same parsing,
// normalisation, parameter checks and screening (internal/screen: the
// duplicates, the suppression list and the recent sends of lists) —
// without storing or sending anything. lists may be nil: then only invalid
// rows and duplicates are found. The summary keeps the first keep skipped
// rows (all when keep < 0); each, if not nil, gets every one as it is
// found, so that a report of any size needs no memory.
func CheckEach(ctx context.Context, r io.Reader, file string, spec campaign.Spec, ro ReadOptions, lists screen.Lists,
	keep int, each func(campaign.Skip) error) (Summary, error) {
	rd, err := recipients.Open(r, file, ro.recipients(spec))
	if err != nil {
		return Summary{}, err
	}
	so := ro.screen(spec, lists, nil)
	if so.PhoneOnly, err = phoneOnly(ctx, lists, spec); err != nil {
		return Summary{}, err
	}
	if ro.Schedule.Window != nil {
		so.Zones = newZoneFinder(ro.Schedule, time.Now()).of
	}
	scr, err := screen.New(ctx, so)
	if err != nil {
		return Summary{}, err
	}
	gc := paceGC(checkGCPercent, checkHeadroom)
	defer gc.stop()
	t := newTally(keep)
	t.byReason = true
	markets, places := pricing.DefaultMarkets(), map[pricing.Place]int64{}
	err = screenRows(ctx, rd, file, scr, ro.Lines, func(rows []recipients.Row, verdicts []screen.Verdict, skips []campaign.Skip) error {
		for i, v := range verdicts {
			if v == screen.Keep {
				places[markets.Lookup(rows[i].Phone)]++
			}
		}
		t.add(skips)
		gc.step()
		for _, k := range skips {
			if each != nil {
				if err := each(k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	sum := t.summary(scr.Kept)
	sum.Zones = scr.ZoneCounts
	sum.Elsewhere = scr.Elsewhere
	sum.Phone = rd.PhoneColumn()
	sum.Places = places
	return sum, nil
}

// Report is a --report file being written: every skipped row, with its
// line and reason, as CSV. It appears at its path only on Commit, whole,
// so a reader never sees half a report.
type Report struct {
	path string
	tmp  *os.File
	w    *csv.Writer
	n    int
}

// NewReport starts a report at path.
func NewReport(path string) (*Report, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wasend-report-*.csv")
	if err != nil {
		return nil, fmt.Errorf("write report: %w", err)
	}
	r := &Report{path: path, tmp: tmp, w: csv.NewWriter(tmp)}
	if err := r.w.Write([]string{"line", "input", "reason"}); err != nil {
		r.Abort()
		return nil, fmt.Errorf("write report %s: %w", path, err)
	}
	return r, nil
}

// Add writes one skipped row.
func (r *Report) Add(k campaign.Skip) error {
	r.n++
	if err := r.w.Write([]string{strconv.Itoa(k.Line), k.Input, k.Reason}); err != nil {
		return fmt.Errorf("write report %s: %w", r.path, err)
	}
	return nil
}

// Rows is how many rows were added.
func (r *Report) Rows() int { return r.n }

// Commit puts the report at its path.
func (r *Report) Commit() error {
	r.w.Flush()
	err := r.w.Error()
	if err == nil {
		err = r.tmp.Close()
	} else {
		r.tmp.Close()
	}
	if err == nil {
		err = os.Rename(r.tmp.Name(), r.path)
	}
	if err != nil {
		os.Remove(r.tmp.Name())
		return fmt.Errorf("write report %s: %w", r.path, err)
	}
	return nil
}

// Abort discards the report.
func (r *Report) Abort() {
	r.tmp.Close()
	os.Remove(r.tmp.Name())
}

// WriteReport writes every skipped row, with its line and reason, as CSV to
// path — atomically, so a reader never sees half a report.
func WriteReport(path string, skipped []campaign.Skip) error {
	r, err := NewReport(path)
	if err != nil {
		return err
	}
	for _, k := range skipped {
		if err := r.Add(k); err != nil {
			r.Abort()
			return err
		}
	}
	return r.Commit()
}
