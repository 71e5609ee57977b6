// Package screen decides which rows of a recipient file are not messaged,
// and says why in one set of reason texts. Import, check, plan and
// suppress import all screen through it, so a rule and its wording live
// here only.
//
// A row is screened in this order, and the first rule that applies names
// the reason:
//
//  1. invalid: the reader could not make a recipient of it (bad number,
//     missing parameter, ragged row …);
//  2. duplicate: its number is on an earlier line of the same file;
//  3. already in the campaign: an edited file continuing an unfinished
//     campaign (not a skip: the row is counted, not stored again);
//  4. suppressed: the number is on the suppression list;
//  5. contacted within: any campaign sent to it within --skip-contacted-within;
//  6. same template: a campaign sent it the same template within
//     SameTemplateWindow (unless --again);
//  7. phone only: an authentication template to a person known only by a
//     business-scoped user id (Options.PhoneOnly);
//  8. no service window: a free-form (text) message, and the number wrote
//     nothing in the last 24 h (unless --ignore-window; service.go).
//
// With Options.Links, a person's number and user id are one recipient for
// every rule (docs/recipients.md#recipients-without-a-phone-number).
package screen

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/numberset"
	"github.com/wasend/wasend/internal/recipients"
)

// SameTemplateWindow is how long after a template reached a number no
// other campaign sends it the same template, unless told to (--again).
const SameTemplateWindow = 24 * time.Hour

// Kind is the class of a skip reason.
type Kind int

// The kinds of skipped rows, in screening order.
const (
	Invalid Kind = iota
	Duplicate
	Suppressed
	Contacted    // --skip-contacted-within
	SameTemplate // the same template within SameTemplateWindow
	NoWindow     // a text message without an open customer service window
)

// The fixed beginnings of the reason texts; KindOf reads them back.
const (
	duplicatePrefix    = "duplicate of line "
	suppressedPrefix   = "suppressed: "
	contactedPrefix    = "contacted within "
	sameTemplatePrefix = "sent template "
)

// InvalidReason is how a row problem is reported: the column, then why.
func InvalidReason(e *recipients.RowError) string {
	if e.Column != "" {
		return fmt.Sprintf("column %s: %s", e.Column, e.Reason)
	}
	return e.Reason
}

// InvalidSkip is the skip of a row the reader could not use.
func InvalidSkip(e *recipients.RowError) campaign.Skip {
	return campaign.Skip{Line: e.Line, Input: e.Value, Reason: InvalidReason(e)}
}

// DuplicateReason: the number was first listed on line first.
func DuplicateReason(first int, phone string) string {
	return fmt.Sprintf("%s%d (%s)", duplicatePrefix, first, phone)
}

// SuppressedReason: the number is on the suppression list, for why ("" when
// no reason was given).
func SuppressedReason(why string) string {
	if why == "" {
		why = "opted out"
	}
	return suppressedPrefix + why
}

// ContactedReason: any campaign sent to the number within d.
func ContactedReason(d time.Duration, c Contact) string {
	return fmt.Sprintf("%s%s (campaign %d, %s)", contactedPrefix, d, c.CampaignID, c.At.UTC().Format(time.RFC3339))
}

// SameTemplateReason: campaign c.CampaignID sent the number template within
// SameTemplateWindow.
func SameTemplateReason(template string, c Contact) string {
	return fmt.Sprintf("%s%s within %s (campaign %d, %s); --again sends it anyway", sameTemplatePrefix, template,
		SameTemplateWindow, c.CampaignID, c.At.UTC().Format(time.RFC3339))
}

// KindOf classifies a reason text made by this package.
func KindOf(reason string) Kind {
	switch {
	case strings.HasPrefix(reason, duplicatePrefix):
		return Duplicate
	case strings.HasPrefix(reason, suppressedPrefix):
		return Suppressed
	case strings.HasPrefix(reason, contactedPrefix):
		return Contacted
	case strings.HasPrefix(reason, sameTemplatePrefix):
		return SameTemplate
	case strings.HasPrefix(reason, campaign.NoWindowPrefix):
		return NoWindow
	}
	return Invalid
}

// Contact is a number's latest send: by which campaign, and when.
type Contact = campaign.Contact

// Lists are the stored lists a screen consults (runner.Lists).
type Lists interface {
	// CountSuppressions is how many numbers the suppression list holds (an
	// empty list needs no lookups).
	CountSuppressions(ctx context.Context) (int, error)
	// SuppressedIn returns the listed numbers among phones, with their
	// reasons ("" when none was given).
	SuppressedIn(ctx context.Context, phones []string) (map[string]string, error)
	// ContactedWithin returns every number any campaign sent to within d.
	ContactedWithin(ctx context.Context, d time.Duration) (map[string]Contact, error)
	// SentTemplateWithin returns every number sent template within d.
	SentTemplateWithin(ctx context.Context, template string, d time.Duration) (map[string]Contact, error)
}

// Links are the phone ↔ business-scoped user id pairs learned from
// webhooks (store.LinkedIn): with them one person is one person whichever
// of the two a row gives.
type Links interface {
	// CountLinks is how many pairs are known (none: no lookups).
	CountLinks(ctx context.Context) (int, error)
	// LinkedIn returns, for each of ids that has a link, the ids of the
	// same person.
	LinkedIn(ctx context.Context, ids []string) (map[string][]string, error)
}

// Options say which rules apply.
type Options struct {
	// Links, when set, make the other rules see a person's number and user
	// id as one: a row's duplicate, suppression and recent sends are
	// found by either, and a row that gives only a user id whose number is
	// known is sent to the number (the key the reach and the repeat guard
	// count). nil: a row is its own recipient only.
	Links Links
	// PhoneOnly, when not "", skips rows whose recipient is a user id with
	// this reason: authentication templates need a phone number.
	PhoneOnly string
	// Lists: the suppression list and the send history; nil screens for
	// invalid rows and duplicates only.
	Lists Lists
	// ContactedWithin skips numbers any campaign sent to within it; 0: off.
	ContactedWithin time.Duration
	// Spec is the message: a template message skips numbers that got the
	// same template within SameTemplateWindow, unless Again.
	Spec  campaign.Spec
	Again bool
	// Prior holds the numbers already in the unfinished campaigns the file
	// may continue, each added with its campaign's index as its line: such
	// rows are counted (Screen.Already, AlreadyIn) and neither stored nor
	// skipped.
	Prior *numberset.Set
	// Shard keeps only the rows whose number is in it (--shard K/N); the
	// others are another host's: counted (Screen.Elsewhere), neither stored
	// nor skipped, and not part of the recipient set.
	Shard Shard
	// Window, when set, skips the rows without an open customer service
	// window (a text campaign, unless --ignore-window).
	Window *Window
	// Zones, when set (a send window), gives each row that passes the
	// other rules its time zones, stored in the row's Zones; its error is
	// the row's skip reason.
	Zones func(recipients.Row) (string, error)
}

// Screen screens the rows of one file, in file order.
type Screen struct {
	o            Options
	suppressions bool
	contacted    map[string]Contact
	sameTemplate map[string]Contact
	numbers      *numberset.Set
	links        bool // Options.Links holds some
	key          RecipientKey
	// Already counts the rows whose number is in Options.Prior; AlreadyIn
	// by the index they were added with.
	Already   int
	AlreadyIn map[int]int
	// Kept counts the rows that passed; Elsewhere the rows of other
	// shards (Options.Shard).
	Kept, Elsewhere int
	// ZoneCounts counts the rows kept by their zones (Options.Zones).
	ZoneCounts map[string]int
}

// New loads what the rules need from o.Lists.
func New(ctx context.Context, o Options) (*Screen, error) {
	s := &Screen{o: o, numbers: numberset.New()}
	if o.Links != nil {
		n, err := o.Links.CountLinks(ctx)
		if err != nil {
			return nil, err
		}
		s.links = n > 0
	}
	if o.Lists == nil {
		return s, nil
	}
	n, err := o.Lists.CountSuppressions(ctx)
	if err != nil {
		return nil, err
	}
	s.suppressions = n > 0
	if o.ContactedWithin > 0 {
		if s.contacted, err = o.Lists.ContactedWithin(ctx, o.ContactedWithin); err != nil {
			return nil, err
		}
	}
	if o.Spec.Kind == campaign.KindTemplate && !o.Again {
		if s.sameTemplate, err = o.Lists.SentTemplateWithin(ctx, o.Spec.Template, SameTemplateWindow); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Verdict is what becomes of one row.
type Verdict int

// The verdicts.
const (
	Keep      Verdict = iota // message it
	Skip                     // don't; the skip says why
	Already                  // its number is already in the campaign being continued
	Elsewhere                // its number is in another host's shard (Options.Shard)
)

// Rows screens rows, given in file order (row errors are InvalidSkip's).
// verdict[i] is rows[i]'s verdict; skips holds the skipped ones, in file
// order.
func (s *Screen) Rows(ctx context.Context, rows []recipients.Row) (verdicts []Verdict, skips []campaign.Skip, err error) {
	verdicts = make([]Verdict, len(rows))
	reasons := make([]string, len(rows))
	ids, err := s.identities(ctx, rows)
	if err != nil {
		return nil, nil, err
	}
	var ask, askWindow []string
	for i, r := range rows {
		if !s.o.Shard.Has(r.Phone) {
			verdicts[i] = Elsewhere
			continue
		}
		if first, dup := s.seen(r, ids[i]); dup {
			reasons[i] = DuplicateReason(first, r.Phone)
			continue
		}
		s.key.add(r.Phone)
		if s.o.Prior != nil {
			if in, ok := s.o.Prior.Line(r.Phone); ok {
				verdicts[i] = Already
				if s.AlreadyIn == nil {
					s.AlreadyIn = map[int]int{}
				}
				s.AlreadyIn[in]++
				continue
			}
		}
		if s.suppressions {
			ask = append(ask, r.Phone)
			ask = append(ask, ids[i]...)
		}
		if s.o.Window != nil {
			askWindow = append(askWindow, r.Phone)
		}
	}
	var suppressed map[string]string
	if len(ask) > 0 {
		if suppressed, err = s.o.Lists.SuppressedIn(ctx, ask); err != nil {
			return nil, nil, err
		}
	}
	var lastWrote map[string]time.Time
	if len(askWindow) > 0 {
		if lastWrote, err = s.o.Window.Last(ctx, askWindow); err != nil {
			return nil, nil, err
		}
	}
	for i, r := range rows {
		switch verdicts[i] {
		case Already:
			s.Already++
			continue
		case Elsewhere:
			s.Elsewhere++
			continue
		}
		if reasons[i] == "" {
			if why, ok := lookup(suppressed, r.Phone, ids[i]); ok {
				reasons[i] = SuppressedReason(why)
			} else if c, ok := lookup(s.contacted, r.Phone, ids[i]); ok {
				reasons[i] = ContactedReason(s.o.ContactedWithin, c)
			} else if c, ok := lookup(s.sameTemplate, r.Phone, ids[i]); ok {
				reasons[i] = SameTemplateReason(s.o.Spec.Template, c)
			} else if s.o.PhoneOnly != "" && campaign.IsBSUID(r.Phone) {
				reasons[i] = s.o.PhoneOnly
			} else if w := s.o.Window; w != nil && !campaign.WindowOpen(lastWrote[r.Phone], w.Now) {
				reasons[i] = campaign.NoWindowReason(lastWrote[r.Phone])
			}
		}
		if reasons[i] == "" && s.o.Zones != nil {
			z, err := s.o.Zones(r)
			if err != nil {
				reasons[i] = err.Error()
			} else {
				rows[i].Zones = z
				if s.ZoneCounts == nil {
					s.ZoneCounts = map[string]int{}
				}
				s.ZoneCounts[z]++
			}
		}
		if reasons[i] == "" {
			s.Kept++
			continue
		}
		verdicts[i] = Skip
		skips = append(skips, campaign.Skip{Line: r.Line, Input: r.Input, Reason: reasons[i]})
	}
	return verdicts, skips, nil
}

// identities resolves each row's recipient through the links (a user id
// whose number is known is sent to the number) and returns the row's other
// ids: its user id and every id linked to it. A row without a user id
// and without links has none.
func (s *Screen) identities(ctx context.Context, rows []recipients.Row) ([][]string, error) {
	ids := make([][]string, len(rows))
	var links map[string][]string
	if s.links {
		var ask []string
		for _, r := range rows {
			ask = append(ask, r.Phone)
			if r.UserID != "" && r.UserID != r.Phone {
				ask = append(ask, r.UserID)
			}
		}
		var err error
		if links, err = s.o.Links.LinkedIn(ctx, ask); err != nil {
			return nil, err
		}
	}
	for i := range rows {
		r := &rows[i]
		if campaign.IsBSUID(r.Phone) {
			for _, id := range links[r.Phone] {
				if !campaign.IsBSUID(id) {
					// Meta recommends the number when it is known; the
					// row is then one recipient with the number's rows.
					r.Phone = id
					break
				}
			}
		}
		var other []string
		add := func(id string) {
			if id != "" && id != r.Phone && !slices.Contains(other, id) {
				other = append(other, id)
			}
		}
		add(r.UserID)
		for _, id := range links[r.Phone] {
			add(id)
		}
		for _, id := range links[r.UserID] {
			add(id)
		}
		ids[i] = other
	}
	return ids, nil
}

// seen adds a row's recipient and its other ids to the set of the file's
// people, unless one of them was there: then it returns that line.
func (s *Screen) seen(r recipients.Row, other []string) (first int, dup bool) {
	for _, id := range other {
		if line, ok := s.numbers.Line(id); ok {
			return line, true
		}
	}
	if first, dup := s.numbers.Add(r.Phone, r.Line); dup {
		return first, true
	}
	for _, id := range other {
		s.numbers.Add(id, r.Line)
	}
	return 0, false
}

// lookup finds a row in a list by its recipient or any of its other ids.
func lookup[V any](list map[string]V, phone string, other []string) (V, bool) {
	if v, ok := list[phone]; ok {
		return v, true
	}
	for _, id := range other {
		if v, ok := list[id]; ok {
			return v, true
		}
	}
	var zero V
	return zero, false
}

// Key is the recipient set's key so far: every distinct valid number
// screened, whatever became of it.
func (s *Screen) Key() string { return s.key.String() }

// RecipientKey identifies a set of numbers whatever their order: the count
// and the sum, modulo 2¹²⁸, of each number's 128-bit FNV-1a hash. Numbers
// must be added once each.
type RecipientKey struct {
	n      uint64
	hi, lo uint64
}

func (k *RecipientKey) add(phone string) {
	h := fnv.New128a()
	h.Write([]byte(phone))
	var b [16]byte
	sum := h.Sum(b[:0])
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(sum[i])
		lo = lo<<8 | uint64(sum[8+i])
	}
	var carry uint64
	k.lo, carry = addCarry(k.lo, lo)
	k.hi += hi + carry
	k.n++
}

// Add adds one number, which must not have been added before.
func (k *RecipientKey) Add(phone string) { k.add(phone) }

func addCarry(a, b uint64) (uint64, uint64) {
	s := a + b
	if s < a {
		return s, 1
	}
	return s, 0
}

// String is the key as stored: count, then the sum in hex.
func (k RecipientKey) String() string {
	return fmt.Sprintf("%d:%016x%016x", k.n, k.hi, k.lo)
}

// Len is how many numbers the key holds.
func (k RecipientKey) Len() int { return int(k.n) }
