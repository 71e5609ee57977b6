package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/numberset"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/screen"
	"github.com/wasend/wasend/internal/store/driver"
)

// A campaign's identity is its message (template, language and parameter
// columns, or the text) and its recipients (the distinct valid numbers of
// its file, of its shard with --shard): not the file's bytes, and not how
// it was read. Shards of one file share no number, so each is a campaign of
// its own, found again by its own source key (Fingerprint). Prepare applies
// the rule, inside the import's transaction (it holds the write lock, so two
// processes starting on one file end up on one campaign):
//
//   - the file's numbers overlap the newest unfinished campaign with the
//     same message: its new numbers are added to that campaign, and nobody
//     already in it is added again (this also resumes an unchanged list);
//   - the same message already went to exactly these numbers in a finished
//     (or cancelled) campaign: nothing is imported (Result.Repeat);
//   - otherwise a new campaign.
//
// --again makes a new campaign in every case; a --name other than the
// matching campaign's makes a new one after a finished campaign, and is
// refused on an unfinished one (ErrOtherName).

// ErrNothingToSend: the file has no row that could be messaged, so no
// campaign was made.
var ErrNothingToSend = errors.New("no recipient to send to")

// ErrOtherName: --name names another campaign than the unfinished one the
// file continues.
var ErrOtherName = errors.New("the list continues a campaign with another name")

// MaxListedSkips is how many skipped rows an import returns; the store
// keeps all of them (`wasend campaign skipped ID`).
const MaxListedSkips = 20

// Fingerprint is a file's source key: its bytes, message spec, read
// flags and shard. A campaign with the same source key is found again without
// reading the file (the shortcut for re-running an unchanged command); its
// value for a file and flags is the same as before campaigns were
// identified by their recipients.
func Fingerprint(file io.Reader, spec campaign.Spec, ro ReadOptions) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", err
	}
	meta, _ := json.Marshal(struct {
		Spec campaign.Spec
		Read sourceRead
	}{spec, sourceRead{strings.ToUpper(ro.Region), ro.Delimiter, ro.PhoneColumn, ro.SkipContactedWithin, ro.Shard.String(), ro.UserIDColumn}})
	h.Write([]byte{0})
	h.Write(meta)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sourceRead are the read flags in a source key, as they always were,
// and the shard: shards of one file are campaigns of their own, so
// `run --shard 2/2` never finds shard 1's campaign by its file. The whole
// list adds nothing, so its key (and every key stored before shards were
// part of it) stays as it was.
type sourceRead struct {
	Region              string
	Delimiter           rune
	PhoneColumn         string
	SkipContactedWithin time.Duration
	Shard               string `json:",omitempty"`
	UserIDColumn        string `json:",omitempty"` // --user-id-column: keys stored before it stay as they were
}

// Prepare finds or creates the campaign to run.
func Prepare(ctx context.Context, o Options) (Result, error) {
	res, err := prepare(ctx, o)
	if err == nil && !res.Repeat && o.ResumeID == 0 && res.Campaign.Spec.Kind == campaign.KindText {
		// The run's --ignore-window decides whether its claims check the
		// window; a resume keeps what the campaign has.
		err = o.Store.SetServiceWindow(ctx, res.Campaign.ID, !o.IgnoreWindow)
	}
	if err != nil || res.Imported || res.Repeat || (o.Schedule == (campaign.Schedule{}) && o.Share.IsZero()) {
		return res, err
	}
	// An existing campaign takes the schedule and share given now.
	if o.Schedule != (campaign.Schedule{}) {
		if err := o.Store.SetSchedule(ctx, res.Campaign.ID, o.Schedule); err != nil {
			return res, err
		}
	}
	if !o.Share.IsZero() {
		if err := o.Store.SetShare(ctx, res.Campaign.ID, o.Share); err != nil {
			return res, err
		}
	}
	res.Campaign, err = o.Store.Campaign(ctx, res.Campaign.ID)
	return res, err
}

func prepare(ctx context.Context, o Options) (Result, error) {
	var res Result
	if o.ResumeID != 0 {
		c, err := o.Store.Campaign(ctx, o.ResumeID)
		if err != nil {
			return res, err
		}
		res.Campaign = c
		return res, nil
	}
	if o.From != 0 {
		return prepareFrom(ctx, o)
	}
	f, err := recipients.OpenFile("recipient", o.File)
	if err != nil {
		return res, err
	}
	defer f.Close()
	ro := ReadOptions{Region: o.Region, Delimiter: o.Delimiter, PhoneColumn: o.PhoneColumn,
		SkipContactedWithin: o.SkipContactedWithin, Again: o.Again, Shard: o.Shard, IgnoreWindow: o.IgnoreWindow}
	src, err := Fingerprint(f, o.Spec, ro)
	if err != nil {
		return res, fmt.Errorf("read %s: %w", o.File, err)
	}
	// The same bytes read the same way: no need to read them again.
	if res, found, err := bySource(ctx, o, src); found || err != nil {
		return res, err
	}
	if o.Preflight != nil {
		if err := o.Preflight(ctx); err != nil {
			return res, err
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return res, fmt.Errorf("read %s: %w", o.File, err)
	}
	name := o.Name
	if name == "" {
		name = campaign.NameOf(filepath.Base(o.File))
	}
	return importFile(ctx, o.Store, f, o.File, campaign.Campaign{Name: name, Source: o.File, Spec: o.Spec, Schedule: o.Schedule,
		Share: o.Share.Apply(campaign.DefaultShare)}, ro,
		&identity{source: src, name: o.Name})
}

// bySource finds the campaign with source key src, unless --again.
func bySource(ctx context.Context, o Options, src string) (res Result, found bool, err error) {
	if o.Again {
		return res, false, nil
	}
	c, err := readmodel.New(o.Store).CampaignBySource(ctx, src)
	switch {
	case err == nil && (o.Name == "" || o.Name == c.Name):
		res.Campaign, res.Repeat = c, ended(c)
		return res, true, nil
	case err == nil && !ended(c):
		return res, false, otherName(o.Name, c, 0)
	case err != nil && !errors.Is(err, campaign.ErrNotFound):
		return res, false, err
	}
	return res, false, nil
}

// ended reports whether c is finished or cancelled: a file never
// continues it.
func ended(c campaign.Campaign) bool {
	return c.State == campaign.CampaignFinished || c.State == campaign.CampaignCancelled
}

func otherName(name string, c campaign.Campaign, already int) error {
	overlap := "the same recipients"
	if already > 0 {
		overlap = fmt.Sprintf("%d of these recipients", already)
	}
	return fmt.Errorf("%w: unfinished campaign %d %q already has %s with the same message; run without --name %q to continue it, or add --again for a separate campaign that messages them again",
		ErrOtherName, c.ID, c.Name, overlap, name)
}

// identity is what Prepare needs an import to decide.
type identity struct {
	source string // the file's source key
	name   string // --name as given, "" when not
}

// Import reads a recipient file into a new campaign in one transaction:
// an error or an interrupt leaves nothing behind. Rows that can't be used
// are skipped, stored with their line and reason; the first MaxListedSkips
// are returned.
func Import(ctx context.Context, st driver.Driver, r io.Reader, file string, c campaign.Campaign, region string) (campaign.Campaign, []campaign.Skip, error) {
	return ImportWith(ctx, st, r, file, c, ReadOptions{Region: region})
}

// ReadOptions say how to read and screen a recipient file.
type ReadOptions struct {
	Region      string // default country of national numbers
	Delimiter   rune   // 0: detect from the header
	PhoneColumn string // "": the first of phone, mobile, msisdn, wa_id or number
	// UserIDColumn names the column of business-scoped user ids (--user-id-column);
	// "": user_id, bsuid or wa_user_id when the file has one.
	UserIDColumn string
	// SkipContactedWithin skips numbers any campaign sent to within this
	// long (protection against 131049 and the pair limit); 0: off.
	SkipContactedWithin time.Duration
	// Again sends to numbers that got the same template within
	// screen.SameTemplateWindow (skipped otherwise).
	Again bool
	// Schedule with a send window makes Check find each row's time zones
	// as an import would (Summary.Zones); not part of the fingerprint.
	Schedule campaign.Schedule `json:"-"`
	// Shard keeps only this host's part of the list (--shard K/N).
	Shard screen.Shard
	// IgnoreWindow sends a text message also to numbers without an open
	// customer service window (--ignore-window); not part of the source key.
	IgnoreWindow bool `json:"-"`
	// Now is the instant the service window is judged at. [time.Now]
	Now time.Time `json:"-"`
	// Lines, when set, maps a line of the file to the line rows and skips
	// name (a retargeted campaign's: its source's, SegmentFile.Line).
	Lines func(int) int `json:"-"`
}

// How long a campaign's sends count after they were made, also when the
// campaign is deleted: the same template skips their numbers for
// SameTemplateWindow, and the portfolio's reach counts them for
// ReachWindow.
const (
	SameTemplateWindow = screen.SameTemplateWindow
	ReachWindow        = ratelimit.ReachWindow
)

// ParseShard reads --shard K/N into ReadOptions.Shard's value.
func ParseShard(s string) (screen.Shard, error) { return screen.ParseShard(s) }

func (ro ReadOptions) recipients(spec campaign.Spec) recipients.Options {
	return recipients.Options{Region: ro.Region, Delimiter: ro.Delimiter, PhoneColumn: ro.PhoneColumn, UserIDColumn: ro.UserIDColumn,
		Params: spec.Params, Text: spec.Text, NamedParams: spec.NamedParams, Header: spec.Header, Buttons: spec.Buttons}
}

// Lists are the lists screening consults in st's database, all read
// models: the suppression list, the recent sends, the links between
// numbers and user ids, and when people last wrote.
func Lists(st driver.Driver) screen.Lists { return readmodel.New(st) }

func (ro ReadOptions) screen(spec campaign.Spec, lists screen.Lists, prior *numberset.Set) screen.Options {
	so := screen.Options{Lists: lists, ContactedWithin: ro.SkipContactedWithin, Spec: spec, Again: ro.Again, Prior: prior,
		Shard: ro.Shard}
	if l, ok := lists.(screen.Links); ok {
		so.Links = l // the store's phone ↔ user id links
	}
	if l, ok := lists.(lastWriter); ok && spec.Kind == campaign.KindText && !ro.IgnoreWindow {
		now := ro.Now
		if now.IsZero() {
			now = time.Now()
		}
		so.Window = &screen.Window{Now: now, Last: l.LastInbound}
	}
	return so
}

// lastWriter says when people last wrote (the store's inbound messages):
// the lists a text message's screening needs.
type lastWriter interface {
	LastInbound(ctx context.Context, phones []string) (map[string]time.Time, error)
}

// ImportWith is Import with every reading option: always a new campaign.
//
// Rows are made on every core (recipients.Parallel), screened
// (internal/screen) and stored a batch at a time; skipped rows are stored
// in file order. Memory does not grow with them.
func ImportWith(ctx context.Context, st driver.Driver, r io.Reader, file string, c campaign.Campaign, ro ReadOptions) (campaign.Campaign, []campaign.Skip, error) {
	res, err := importFile(ctx, st, r, file, c, ro, nil)
	return res.Campaign, res.Skipped, err
}

// importFile imports r; with id, it applies the identity rule.
func importFile(ctx context.Context, st driver.Driver, r io.Reader, file string, c campaign.Campaign, ro ReadOptions, id *identity) (Result, error) {
	var res Result
	rd, err := recipients.Open(r, file, ro.recipients(c.Spec))
	if err != nil {
		return res, err
	}
	res.Phone = rd.PhoneColumn()
	im, err := st.Import(ctx, c)
	if err != nil {
		return res, err
	}
	defer im.Rollback()
	gc := paceGC(importGCPercent, importHeadroom)
	defer gc.stop()

	var (
		siblings []driver.Sibling
		prior    *driver.Sibling // the unfinished campaign this file continues
		priorSet *numberset.Set
	)
	if id != nil && !ro.Again {
		if siblings, err = im.SameMessage(ctx); err != nil {
			return res, err
		}
		// The numbers of every unfinished campaign with this message, each
		// with its campaign's index: a number in any of them is never added
		// again, and the file continues the one it overlaps most.
		for i, sb := range siblings {
			if ended(sb.Campaign) {
				continue
			}
			if priorSet == nil {
				priorSet = numberset.New()
			}
			if err := im.EachNumber(ctx, sb.Campaign.ID, func(p string) { priorSet.Add(p, i) }); err != nil {
				return res, err
			}
		}
	}
	if ro.Now.IsZero() {
		ro.Now = st.Now()
	}
	so := ro.screen(c.Spec, Lists(st), priorSet)
	if so.PhoneOnly, err = phoneOnly(ctx, so.Lists, c.Spec); err != nil {
		return res, err
	}
	if c.Schedule.Window != nil {
		so.Zones = newZoneFinder(c.Schedule, st.Now()).of
	}
	scr, err := screen.New(ctx, so)
	if err != nil {
		return res, err
	}
	tally := newTally(MaxListedSkips)
	var batch []campaign.Message
	err = screenRows(ctx, rd, file, scr, ro.Lines, func(rows []recipients.Row, verdicts []screen.Verdict, skips []campaign.Skip) error {
		batch = batch[:0]
		for i, row := range rows {
			if verdicts[i] == screen.Keep {
				batch = append(batch, message(row))
			}
		}
		if _, err := im.AddBatch(ctx, batch); err != nil {
			return err
		}
		clear(batch)
		tally.add(skips)
		gc.step()
		return im.SkipBatch(ctx, skips)
	})
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("import of %s interrupted, nothing stored: %w", file, ctx.Err())
		}
		return res, fmt.Errorf("nothing stored: %w", err)
	}
	key, source := scr.Key(), ""
	if id != nil {
		source = id.source
	}
	im.SetKeys(source, key)
	res.Skipped = tally.first
	res.Elsewhere = scr.Elsewhere
	best := -1 // the unfinished campaign with the most of the file's numbers; the newest on a tie
	for i, n := range scr.AlreadyIn {
		if best < 0 || n > scr.AlreadyIn[best] || (n == scr.AlreadyIn[best] && i < best) {
			best = i
		}
	}
	if best >= 0 {
		prior = &siblings[best]
	}
	if prior != nil && scr.Already > 0 {
		if id.name != "" && id.name != prior.Campaign.Name {
			return res, otherName(id.name, prior.Campaign, scr.Already)
		}
		res.Campaign, err = im.ContinueInto(ctx, prior.Campaign)
		res.Continued, res.Added, res.Already = err == nil, scr.Kept, scr.Already
		return res, err
	}
	if id != nil && !ro.Again {
		for _, sb := range siblings {
			if !ended(sb.Campaign) || (id.name != "" && id.name != sb.Campaign.Name) {
				continue
			}
			same, err := sameRecipients(ctx, im, sb, key)
			if err != nil {
				return res, err
			}
			if same {
				return Result{Campaign: sb.Campaign, Repeat: true, Phone: res.Phone}, nil
			}
		}
	}
	if scr.Kept == 0 {
		return res, nothingToSend(file, tally)
	}
	res.Campaign, err = im.Commit(ctx)
	res.Imported = err == nil
	return res, err
}

// sameRecipients reports whether sibling sb's recipients have key. A
// campaign imported before keys were stored gets one from its messages.
func sameRecipients(ctx context.Context, im driver.Importer, sb driver.Sibling, key string) (bool, error) {
	if sb.RecipientsKey != "" {
		return sb.RecipientsKey == key, nil
	}
	var k screen.RecipientKey
	if err := im.EachNumber(ctx, sb.Campaign.ID, k.Add); err != nil {
		return false, err
	}
	return k.String() == key, nil
}

// nothingToSend says why a file made no campaign.
func nothingToSend(file string, t *tally) error {
	if t.rows == 0 {
		return fmt.Errorf("%s: %w: the file has no data rows, only a header; nothing stored", file, ErrNothingToSend)
	}
	var parts []string
	for _, k := range []struct {
		n    int
		what string
	}{{t.invalid, "invalid"}, {t.duplicates, "duplicates"}, {t.suppressed, "suppressed"},
		{t.contacted, "contacted recently (--skip-contacted-within)"},
		{t.sameTemplate, "sent the same template within " + screen.SameTemplateWindow.String() + " (--again sends anyway)"},
		{t.noWindow, "without a customer service window"}} {
		if k.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	first := t.first[0]
	return fmt.Errorf("%s: %w: all %d rows were skipped (%s; first: line %d: %s); nothing stored",
		file, ErrNothingToSend, t.rows, strings.Join(parts, ", "), first.Line, first.Reason)
}

// screenRows reads rd and screens its rows, a batch of driver.ImportBatch
// at a time: each batch goes to sink with every row's verdict and, in file
// order, the skipped rows (invalid ones among them).
func screenRows(ctx context.Context, rd *recipients.Reader, file string, scr *screen.Screen, lines func(int) int,
	sink func(rows []recipients.Row, verdicts []screen.Verdict, skips []campaign.Skip) error) error {
	rows := recipients.Parallel(rd, runtime.GOMAXPROCS(0))
	defer rows.Close()
	var (
		batch   = make([]recipients.Row, 0, driver.ImportBatch)
		invalid []campaign.Skip      // rows among batch's lines that can't be used
		rowErr  *recipients.RowError // errors.As's target: declared in the loop, it cost an allocation a row
	)
	flush := func() error {
		verdicts, skips, err := scr.Rows(ctx, batch)
		if err == nil {
			err = sink(batch, verdicts, mergeSkips(invalid, skips))
		}
		clear(batch) // don't keep this batch's strings alive
		batch, invalid = batch[:0], invalid[:0]
		return err
	}
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.As(err, &rowErr) {
			k := screen.InvalidSkip(rowErr)
			if lines != nil {
				k.Line = lines(k.Line)
			}
			invalid = append(invalid, k)
		} else if err != nil {
			return err
		} else {
			if lines != nil {
				row.Line = lines(row.Line)
			}
			batch = append(batch, row)
		}
		if len(batch)+len(invalid) >= driver.ImportBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// mergeSkips merges two lists of skipped rows, each in file order.
func mergeSkips(a, b []campaign.Skip) []campaign.Skip {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make([]campaign.Skip, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Line <= b[0].Line {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// tally counts screened rows by kind, keeping the first few skips (or all
// of them, with keep < 0).
type tally struct {
	keep                                                     int
	rows, valid                                              int
	invalid, duplicates, suppressed, contacted, sameTemplate int
	noWindow                                                 int
	first                                                    []campaign.Skip
	invalidBy                                                map[string]int
	byReason                                                 bool // count invalid rows by reason (check; an import keeps memory flat)
}

func newTally(keep int) *tally { return &tally{keep: keep, invalidBy: map[string]int{}} }

func (t *tally) add(skips []campaign.Skip) {
	t.rows += len(skips)
	for _, k := range skips {
		switch screen.KindOf(k.Reason) {
		case screen.Invalid:
			t.invalid++
			if t.byReason { // for check's summary; an import keeps memory flat
				t.invalidBy[k.Reason]++
			}
		case screen.Duplicate:
			t.duplicates++
		case screen.Suppressed:
			t.suppressed++
		case screen.Contacted:
			t.contacted++
		case screen.SameTemplate:
			t.sameTemplate++
		case screen.NoWindow:
			t.noWindow++
		}
		if t.keep < 0 || len(t.first) < t.keep {
			t.first = append(t.first, k)
		}
	}
}
