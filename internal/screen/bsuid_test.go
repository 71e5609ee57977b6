package screen_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/screen"
)

// links is a fixed set of phone ↔ user id pairs.
type links map[string]string // user id → phone

func (l links) CountLinks(context.Context) (int, error) { return len(l), nil }
func (l links) LinkedIn(_ context.Context, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, id := range ids {
		for user, phone := range l {
			switch id {
			case user:
				out[id] = append(out[id], phone)
			case phone:
				out[id] = append(out[id], user)
			}
		}
	}
	return out, nil
}

// One person is one person whether a row names their number, their user
// id or both: duplicates, the suppression list and recent sends find them
// by either, and a user id whose number is known is sent to the number.
func TestRowsLinkPhonesAndUserIDs(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	const (
		ana = "US.1" // linked to phone(1)
		ben = "US.2" // linked to phone(2), which is suppressed
		cem = "US.3" // suppressed by user id, linked to phone(3)
		dan = "US.4" // contacted by user id, no link
		eve = "US.5" // no link, nothing known
		fay = "US.6" // given beside phone(6) on one line, alone on another
	)
	l := &lists{
		suppressed: map[string]string{phone(2): "replied STOP", cem: `keyword "STOP"`},
		contacted:  map[string]screen.Contact{dan: {CampaignID: 7, At: at}},
	}
	rows := []recipients.Row{
		{Line: 2, Input: ana, Phone: ana, UserID: ana},          // sent to phone(1)
		{Line: 3, Input: "p1", Phone: phone(1)},                 // duplicate of line 2 through the link
		{Line: 4, Input: ben, Phone: ben, UserID: ben},          // suppressed through the link
		{Line: 5, Input: "p3", Phone: phone(3)},                 // suppressed: its user id is
		{Line: 6, Input: dan, Phone: dan, UserID: dan},          // contacted by user id
		{Line: 7, Input: eve, Phone: eve, UserID: eve},          // kept, sent to the user id
		{Line: 8, Input: "p6", Phone: phone(6), UserID: fay},    // kept, sent to the phone
		{Line: 9, Input: fay, Phone: fay, UserID: fay},          // duplicate of line 8 by the file's own pair
		{Line: 10, Input: "p10", Phone: phone(10), UserID: ana}, // Ana again, by her id beside another number
	}
	o := screen.Options{Lists: l, ContactedWithin: time.Hour,
		Links: links{ana: phone(1), ben: phone(2), cem: phone(3)}}
	s, err := screen.New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	verdicts, skips, err := s.Rows(t.Context(), rows)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, k := range skips {
		got[k.Line] = k.Reason
	}
	want := map[int]string{
		3:  screen.DuplicateReason(2, phone(1)),
		4:  screen.SuppressedReason("replied STOP"),
		5:  screen.SuppressedReason(`keyword "STOP"`),
		6:  screen.ContactedReason(time.Hour, screen.Contact{CampaignID: 7, At: at}),
		9:  screen.DuplicateReason(8, fay),
		10: screen.DuplicateReason(2, phone(10)),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("skips\n got %v\nwant %v", got, want)
	}
	wantKeep := []screen.Verdict{screen.Keep, screen.Skip, screen.Skip, screen.Skip, screen.Skip, screen.Keep, screen.Keep, screen.Skip, screen.Skip}
	if !reflect.DeepEqual(verdicts, wantKeep) {
		t.Errorf("verdicts %v, want %v", verdicts, wantKeep)
	}
	if rows[0].Phone != phone(1) || rows[0].Input != ana {
		t.Errorf("Ana's row sends to %q (input %q), want her number %s", rows[0].Phone, rows[0].Input, phone(1))
	}
	if rows[5].Phone != eve {
		t.Errorf("Eve's row sends to %q, want her user id", rows[5].Phone)
	}

	// Without links, each row is only what it names.
	rows2 := []recipients.Row{{Line: 2, Input: ana, Phone: ana, UserID: ana}, {Line: 3, Input: "p1", Phone: phone(1)}}
	s, _ = screen.New(t.Context(), screen.Options{})
	if v, _, _ := s.Rows(t.Context(), rows2); v[0] != screen.Keep || v[1] != screen.Keep || rows2[0].Phone != ana {
		t.Errorf("no links: %v, row 0 to %q", v, rows2[0].Phone)
	}
}

// Authentication templates need a phone number: a row known only by a
// user id is skipped with the reason given.
func TestRowsPhoneOnly(t *testing.T) {
	const why = "authentication template: needs a phone number"
	s, err := screen.New(t.Context(), screen.Options{PhoneOnly: why, Links: links{"US.1": phone(1)},
		Spec: campaign.Spec{Kind: campaign.KindTemplate, Template: "otp"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := []recipients.Row{
		{Line: 2, Input: "US.9", Phone: "US.9", UserID: "US.9"}, // skipped
		{Line: 3, Input: "US.1", Phone: "US.1", UserID: "US.1"}, // its number is known: sent to it
		{Line: 4, Input: "p4", Phone: phone(4), UserID: "US.4"}, // a phone: sent to it
	}
	verdicts, skips, err := s.Rows(t.Context(), rows)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(verdicts, []screen.Verdict{screen.Skip, screen.Keep, screen.Keep}) || len(skips) != 1 || skips[0].Reason != why {
		t.Errorf("verdicts %v, skips %+v", verdicts, skips)
	}
}
