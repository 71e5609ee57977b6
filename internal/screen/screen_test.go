package screen_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/numberset"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/screen"
)

// lists is a fixed set of stored lists. (The store's implementation is
// tested against a real database in internal/store and internal/runner.)
type lists struct {
	suppressed   map[string]string
	contacted    map[string]screen.Contact
	sameTemplate map[string]screen.Contact
	asked        [][]string // SuppressedIn's arguments
	gotTemplate  string
}

func (l *lists) CountSuppressions(context.Context) (int, error) { return len(l.suppressed), nil }
func (l *lists) SuppressedIn(_ context.Context, phones []string) (map[string]string, error) {
	l.asked = append(l.asked, slices.Clone(phones))
	out := map[string]string{}
	for _, p := range phones {
		if why, ok := l.suppressed[p]; ok {
			out[p] = why
		}
	}
	return out, nil
}
func (l *lists) ContactedWithin(context.Context, time.Duration) (map[string]screen.Contact, error) {
	return l.contacted, nil
}
func (l *lists) SentTemplateWithin(_ context.Context, template string, d time.Duration) (map[string]screen.Contact, error) {
	if d != screen.SameTemplateWindow {
		return nil, fmt.Errorf("window %v", d)
	}
	l.gotTemplate = template
	return l.sameTemplate, nil
}

func phone(i int) string { return fmt.Sprintf("+4915100000%03d", i) }

// TestRows: every rule, in its order, with its one reason text.
func TestRows(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	l := &lists{
		suppressed:   map[string]string{phone(3): "replied STOP", phone(4): "", phone(9): ""},
		contacted:    map[string]screen.Contact{phone(5): {CampaignID: 7, At: at}, phone(4): {CampaignID: 7, At: at}},
		sameTemplate: map[string]screen.Contact{phone(6): {CampaignID: 8, At: at}, phone(5): {CampaignID: 8, At: at}},
	}
	prior := numberset.New()
	prior.Add(phone(9), 0)
	prior.Add(phone(8), 0)
	spec := campaign.Spec{Kind: campaign.KindTemplate, Template: "spring_sale", Lang: "en"}
	rows := []recipients.Row{
		{Line: 2, Input: "a", Phone: phone(1)},
		{Line: 3, Input: "b", Phone: phone(1)},  // duplicate of line 2
		{Line: 4, Input: "c", Phone: phone(3)},  // suppressed with a reason
		{Line: 5, Input: "d", Phone: phone(4)},  // suppressed without one (and contacted: suppression first)
		{Line: 6, Input: "e", Phone: phone(5)},  // contacted (and same template: contacted first)
		{Line: 7, Input: "f", Phone: phone(6)},  // same template
		{Line: 8, Input: "g", Phone: phone(9)},  // already in the campaign (and suppressed: already first)
		{Line: 9, Input: "h", Phone: phone(8)},  // already in the campaign
		{Line: 10, Input: "i", Phone: phone(8)}, // a duplicate beats "already"
	}
	tests := []struct {
		name     string
		o        screen.Options
		verdicts []screen.Verdict
		reasons  []string
		already  int
	}{
		{
			name: "every rule",
			o:    screen.Options{Lists: l, ContactedWithin: 72 * time.Hour, Spec: spec, Prior: prior},
			verdicts: []screen.Verdict{screen.Keep, screen.Skip, screen.Skip, screen.Skip, screen.Skip, screen.Skip,
				screen.Already, screen.Already, screen.Skip},
			reasons: []string{
				"duplicate of line 2 (+4915100000001)",
				"suppressed: replied STOP",
				"suppressed: opted out",
				"contacted within 72h0m0s (campaign 7, 2026-03-02T09:00:00Z)",
				"sent template spring_sale within 24h0m0s (campaign 8, 2026-03-02T09:00:00Z); --again sends it anyway",
				"duplicate of line 9 (+4915100000008)",
			},
			already: 2,
		},
		{
			name: "--again sends the same template again",
			o:    screen.Options{Lists: l, Spec: spec, Again: true},
			verdicts: []screen.Verdict{screen.Keep, screen.Skip, screen.Skip, screen.Skip, screen.Keep, screen.Keep,
				screen.Skip, screen.Keep, screen.Skip},
			reasons: []string{
				"duplicate of line 2 (+4915100000001)",
				"suppressed: replied STOP",
				"suppressed: opted out",
				"suppressed: opted out",
				"duplicate of line 9 (+4915100000008)",
			},
		},
		{
			name: "a text message has no template to repeat",
			o:    screen.Options{Lists: l, Spec: campaign.Spec{Kind: campaign.KindText, Text: "hi"}},
			verdicts: []screen.Verdict{screen.Keep, screen.Skip, screen.Skip, screen.Skip, screen.Keep, screen.Keep,
				screen.Skip, screen.Keep, screen.Skip},
			reasons: []string{
				"duplicate of line 2 (+4915100000001)",
				"suppressed: replied STOP",
				"suppressed: opted out",
				"suppressed: opted out",
				"duplicate of line 9 (+4915100000008)",
			},
		},
		{
			name:     "no lists: invalid rows and duplicates only",
			o:        screen.Options{Spec: spec},
			verdicts: []screen.Verdict{0, screen.Skip, 0, 0, 0, 0, 0, 0, screen.Skip},
			reasons:  []string{"duplicate of line 2 (+4915100000001)", "duplicate of line 9 (+4915100000008)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := screen.New(t.Context(), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			// Two batches: duplicates are found across them.
			v1, k1, err := s.Rows(t.Context(), rows[:4])
			if err != nil {
				t.Fatal(err)
			}
			v2, k2, err := s.Rows(t.Context(), rows[4:])
			if err != nil {
				t.Fatal(err)
			}
			if got := append(v1, v2...); !slices.Equal(got, tt.verdicts) {
				t.Errorf("verdicts = %v, want %v", got, tt.verdicts)
			}
			var reasons []string
			for _, k := range append(k1, k2...) {
				reasons = append(reasons, k.Reason)
			}
			if !slices.Equal(reasons, tt.reasons) {
				t.Errorf("reasons:\n%q\nwant\n%q", reasons, tt.reasons)
			}
			if s.Already != tt.already {
				t.Errorf("Already = %d, want %d", s.Already, tt.already)
			}
			keep := 0
			for _, v := range tt.verdicts {
				if v == screen.Keep {
					keep++
				}
			}
			if s.Kept != keep {
				t.Errorf("Kept = %d, want %d", s.Kept, keep)
			}
		})
	}
	if l.gotTemplate != "spring_sale" {
		t.Errorf("same-template list asked for %q", l.gotTemplate)
	}
}

// TestKindOf reads back every reason the package writes.
func TestKindOf(t *testing.T) {
	c := screen.Contact{CampaignID: 1, At: time.Unix(0, 0)}
	for reason, want := range map[string]screen.Kind{
		screen.InvalidReason(&recipients.RowError{Column: "phone", Reason: "not a number"}): screen.Invalid,
		screen.DuplicateReason(2, phone(1)):                                                 screen.Duplicate,
		screen.SuppressedReason(""):                                                         screen.Suppressed,
		screen.SuppressedReason("duplicate of line 2"):                                      screen.Suppressed,
		screen.ContactedReason(time.Hour, c):                                                screen.Contacted,
		screen.SameTemplateReason("t", c):                                                   screen.SameTemplate,
	} {
		if got := screen.KindOf(reason); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", reason, got, want)
		}
	}
}

// TestRecipientKey: a set's key doesn't depend on order, and any change
// of the set changes it.
func TestRecipientKey(t *testing.T) {
	key := func(phones ...string) string {
		var k screen.RecipientKey
		for _, p := range phones {
			k.Add(p)
		}
		return k.String()
	}
	a := key(phone(1), phone(2), phone(3))
	if b := key(phone(3), phone(1), phone(2)); a != b {
		t.Errorf("order changed the key: %s, %s", a, b)
	}
	for _, other := range []string{key(phone(1), phone(2)), key(phone(1), phone(2), phone(4)), key(phone(1), phone(2), phone(3), phone(4)), key()} {
		if other == a {
			t.Errorf("a different set has the same key %s", a)
		}
	}
}

// TestListErrors: a failing lookup is an error, not a row let through.
func TestListErrors(t *testing.T) {
	s, err := screen.New(t.Context(), screen.Options{Lists: failing{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Rows(t.Context(), []recipients.Row{{Line: 2, Phone: phone(1)}}); !errors.Is(err, errBroken) {
		t.Errorf("err = %v, want errBroken", err)
	}
}

var errBroken = errors.New("broken")

type failing struct{ *lists }

func (failing) CountSuppressions(context.Context) (int, error) { return 1, nil }
func (failing) SuppressedIn(context.Context, []string) (map[string]string, error) {
	return nil, errBroken
}
