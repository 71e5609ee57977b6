package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/store/driver"
)

// Retargeting (--from ID --segment SEGMENT) makes a campaign of another
// campaign's rows: the segment's rows are read once, when the campaign is
// made (a snapshot), and written as a recipient file of the columns the
// source campaign kept values of — its phone, its parameter, header and
// button columns — so that they are read, checked and screened exactly as
// a file is (the suppression list, the repeat guard, duplicates), and each
// row keeps the values it was sent with. The campaign's identity is its
// source campaign and segment in place of a file's bytes: the same command
// finds the same campaign again.

// SegmentFile is a campaign's segment as a recipient file.
type SegmentFile struct {
	// Name stands for the file in messages and as the campaign's source.
	Name string
	// From is the source campaign.
	From  campaign.Campaign
	data  []byte
	lines []int // the source line of each data record, in order
	cols  []string
}

// Reader reads the file from its start.
func (f *SegmentFile) Reader() *bytes.Reader { return bytes.NewReader(f.data) }

// Line is the source campaign's line of the file's line n (the header is
// line 1), so that skips and rows name the line of the original file.
func (f *SegmentFile) Line(n int) int {
	if i := n - 2; i >= 0 && i < len(f.lines) {
		return f.lines[i]
	}
	return n
}

// ErrEmptySegment: the segment holds no row, so no campaign is made.
var ErrEmptySegment = fmt.Errorf("%w in the segment", ErrNothingToSend)

// OpenSegment reads campaign from's rows in seg. An unknown campaign and an
// empty segment are errors that say so.
func OpenSegment(ctx context.Context, st driver.Driver, from int64, seg campaign.Segment) (*SegmentFile, error) {
	src, err := st.Campaign(ctx, from)
	if err != nil {
		if errors.Is(err, campaign.ErrNotFound) {
			return nil, fmt.Errorf("--from %d: no such campaign (`wasend campaign list` shows them): %w", from, err)
		}
		return nil, err
	}
	rows, err := readmodel.New(st).SegmentRows(ctx, from, seg)
	if err != nil {
		return nil, err
	}
	f := &SegmentFile{Name: fmt.Sprintf("campaign %d segment %s", from, seg), From: src}
	if len(rows) == 0 {
		counts, err := st.Counts(ctx, from)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: campaign %d %q has no row in segment %s (its %d rows: sent %d, failed %d, unknown %d, pending %d); nothing stored",
			ErrEmptySegment, from, src.Name, seg, counts.Total(), counts[campaign.Sent], counts[campaign.Failed], counts[campaign.Unknown], counts.Open())
	}
	// The columns the source's rows have values for, each once.
	type col struct {
		name  string
		value func(m campaign.Message) string
	}
	cols := []col{{"phone", func(m campaign.Message) string { return m.Phone }}}
	seen := map[string]bool{"phone": true}
	add := func(name string, value func(m campaign.Message) string) {
		if k := strings.ToLower(name); name != "" && !seen[k] {
			seen[k] = true
			cols = append(cols, col{name, value})
		}
	}
	sp := src.Spec
	for i, p := range sp.Params {
		add(p, func(m campaign.Message) string { return valueAt(m.Params, i) })
	}
	if sp.Header != nil {
		add(sp.Header.Column, func(m campaign.Message) string { return m.Header })
	}
	for i, b := range sp.Buttons {
		add(b.Column, func(m campaign.Message) string { return valueAt(m.Buttons, i) })
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	record := make([]string, len(cols))
	for i, c := range cols {
		record[i] = c.name
		f.cols = append(f.cols, c.name)
	}
	w.Write(record)
	for _, m := range rows {
		for i, c := range cols {
			record[i] = c.value(m)
		}
		w.Write(record)
		f.lines = append(f.lines, m.Line)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	f.data = buf.Bytes()
	return f, nil
}

func valueAt(vs []string, i int) string {
	if i < len(vs) {
		return vs[i]
	}
	return ""
}

// ReadOptions are the options its rows are read with: ro's screening, the
// file's own format, and its lines mapped to the source's.
func (f *SegmentFile) ReadOptions(ro ReadOptions) ReadOptions {
	ro.Delimiter, ro.PhoneColumn, ro.Region = ',', "", ""
	ro.Lines = f.Line
	return ro
}

// ColumnError explains a message flag naming a column the source campaign
// kept no values of.
func (f *SegmentFile) ColumnError(err error) error {
	if !errors.Is(err, recipients.ErrUnknownColumn) {
		return err
	}
	return fmt.Errorf("%w; a retargeted row keeps only the values campaign %d was sent with, in its columns %s",
		err, f.From.ID, strings.Join(f.cols, ", "))
}

// RetargetKey is a retargeted campaign's source key: the source campaign,
// the segment, the message and the screening flags, as a file's
// Fingerprint is its bytes and flags.
func RetargetKey(from int64, seg campaign.Segment, spec campaign.Spec, ro ReadOptions) string {
	meta, _ := json.Marshal(struct {
		From    int64
		Segment string
		Spec    campaign.Spec
		Read    sourceRead
	}{from, seg.String(), spec, sourceRead{SkipContactedWithin: ro.SkipContactedWithin, Shard: ro.Shard.String()}})
	h := sha256.Sum256(append([]byte("retarget\x00"), meta...))
	return hex.EncodeToString(h[:])
}

// prepareFrom is prepare for a retargeted campaign (Options.From).
func prepareFrom(ctx context.Context, o Options) (Result, error) {
	ro := ReadOptions{SkipContactedWithin: o.SkipContactedWithin, Again: o.Again, Shard: o.Shard, IgnoreWindow: o.IgnoreWindow}
	src := RetargetKey(o.From, o.Segment, o.Spec, ro)
	if res, found, err := bySource(ctx, o, src); found || err != nil {
		return res, err
	}
	f, err := OpenSegment(ctx, o.Store, o.From, o.Segment)
	if err != nil {
		return Result{}, err
	}
	if o.Preflight != nil {
		if err := o.Preflight(ctx); err != nil {
			return Result{}, err
		}
	}
	name := o.Name
	if name == "" {
		name = campaign.NameOf(fmt.Sprintf("%s %s", f.From.Name, o.Segment))
	}
	res, err := importFile(ctx, o.Store, f.Reader(), f.Name, campaign.Campaign{Name: name, Source: f.Name, Spec: o.Spec, Schedule: o.Schedule,
		Share: o.Share.Apply(campaign.DefaultShare)}, f.ReadOptions(ro), &identity{source: src, name: o.Name})
	return res, f.ColumnError(err)
}
