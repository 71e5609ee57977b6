package storetest

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// Suppressions: the list, its batches, and the copy of the shared list with
// its outbox (a listed number is failed at claim: see the claim tests).

func (s suite) suppressTests() []sub {
	return []sub{
		{"list", s.testSuppressions},
		{"rejects numbers not in E.164", s.testSuppressRejectsUnnormalised},
		{"apply the shared list", s.testApplySuppressions},
		{"outbox", s.testSuppressionOutbox},
	}
}

func (s suite) testSuppressions(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	sp := func(phone, reason string, first time.Time) campaign.Suppression {
		return campaign.Suppression{Phone: phone, Reason: reason, CreatedAt: first}
	}
	// Each step runs at its instant on the same store; want is the whole
	// list afterwards.
	steps := []struct {
		name        string
		at          time.Time
		add         []campaign.Suppression
		remove      []string
		wantAdded   int
		wantRemoved int
		want        []campaign.Suppression
	}{
		{
			name: "add", at: at(0),
			add:       []campaign.Suppression{{Phone: Phone(2), Reason: "STOP received"}, {Phone: Phone(1)}},
			wantAdded: 2,
			want:      []campaign.Suppression{sp(Phone(1), "", at(0)), sp(Phone(2), "STOP received", at(0))},
		},
		{
			name: "re-add keeps first time; a given reason replaces, an empty one does not", at: at(time.Hour),
			add:       []campaign.Suppression{{Phone: Phone(1), Reason: "bounced"}, {Phone: Phone(2)}, {Phone: Phone(3)}},
			wantAdded: 1,
			want: []campaign.Suppression{sp(Phone(1), "bounced", at(0)), sp(Phone(2), "STOP received", at(0)),
				sp(Phone(3), "", at(time.Hour))},
		},
		{
			name: "the same number twice in one batch is added once", at: at(2 * time.Hour),
			add:       []campaign.Suppression{{Phone: Phone(4), Reason: "a"}, {Phone: Phone(4), Reason: "b"}},
			wantAdded: 1,
			want: []campaign.Suppression{sp(Phone(1), "bounced", at(0)), sp(Phone(2), "STOP received", at(0)),
				sp(Phone(3), "", at(time.Hour)), sp(Phone(4), "b", at(2*time.Hour))},
		},
		{
			name: "remove listed, unlisted and repeated", at: at(3 * time.Hour),
			remove:      []string{Phone(3), Phone(9), Phone(1), Phone(1)},
			wantRemoved: 2,
			want:        []campaign.Suppression{sp(Phone(2), "STOP received", at(0)), sp(Phone(4), "b", at(2*time.Hour))},
		},
		{
			name: "removed then added again starts anew", at: at(4 * time.Hour),
			add:       []campaign.Suppression{{Phone: Phone(1)}},
			wantAdded: 1,
			want: []campaign.Suppression{sp(Phone(1), "", at(4*time.Hour)), sp(Phone(2), "STOP received", at(0)),
				sp(Phone(4), "b", at(2*time.Hour))},
		},
		{name: "empty batches", at: at(5 * time.Hour), add: []campaign.Suppression{}, remove: []string{},
			want: []campaign.Suppression{sp(Phone(1), "", at(4*time.Hour)), sp(Phone(2), "STOP received", at(0)),
				sp(Phone(4), "b", at(2*time.Hour))}},
	}
	for _, s := range steps {
		clk.Set(s.at)
		added, err := st.Suppress(t.Context(), s.add)
		if err != nil || added != s.wantAdded {
			t.Fatalf("%s: Suppress = %d, %v; want %d", s.name, added, err, s.wantAdded)
		}
		removed, err := st.Unsuppress(t.Context(), s.remove)
		if err != nil || removed != s.wantRemoved {
			t.Fatalf("%s: Unsuppress = %d, %v; want %d", s.name, removed, err, s.wantRemoved)
		}
		got, err := readmodel.New(st).Suppressions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, s.want, func(a, b campaign.Suppression) bool {
			return a.Phone == b.Phone && a.Reason == b.Reason && a.CreatedAt.Equal(b.CreatedAt)
		}) {
			t.Errorf("%s: list\n got %+v\nwant %+v", s.name, got, s.want)
		}
	}
}

func (s suite) testSuppressRejectsUnnormalised(t *testing.T) {
	st := s.openTest(t, newFakeClock())
	for _, bad := range []string{"", "0151 00000001", "4915100000001", "+", "+0151", "+49 151", "+1234567890123456"} {
		_, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: Phone(1)}, {Phone: bad}})
		if err == nil {
			t.Errorf("Suppress(%q) succeeded", bad)
		}
	}
	// The batch is all or nothing: the good number went in with none of them.
	if n := CountRows(t, st, `SELECT count(*) FROM suppressions`); n != 0 {
		t.Errorf("%d rows after rejected batches, want 0", n)
	}
}

func (s suite) testApplySuppressions(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	if m, err := st.SharedSuppressionsMark(t.Context()); err != nil || m != (driver.SyncMark{}) {
		t.Fatalf("mark of a new database = %+v, %v; want none", m, err)
	}
	sp := func(phone, reason string, first time.Time) campaign.Suppression {
		return campaign.Suppression{Phone: phone, Reason: reason, CreatedAt: first}
	}
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: Phone(1), Reason: "local"}, {Phone: Phone(2), Reason: "STOP"}}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		at      time.Time
		listed  []campaign.Suppression
		removed []string
		want    []campaign.Suppression
	}{
		{
			name: "the other copy's reason wins, even empty; the earlier time stays", at: at(time.Hour),
			listed: []campaign.Suppression{sp(Phone(1), "", at(30*time.Minute)), sp(Phone(2), "bounced", at(-time.Hour)), sp(Phone(3), "new", at(2*time.Hour))},
			want:   []campaign.Suppression{sp(Phone(1), "", at(0)), sp(Phone(2), "bounced", at(-time.Hour)), sp(Phone(3), "new", at(2*time.Hour))},
		},
		{
			name: "removed, listed or not; no time given is now", at: at(3 * time.Hour),
			listed:  []campaign.Suppression{{Phone: Phone(4)}},
			removed: []string{Phone(1), Phone(9)},
			want:    []campaign.Suppression{sp(Phone(2), "bounced", at(-time.Hour)), sp(Phone(3), "new", at(2*time.Hour)), sp(Phone(4), "", at(3*time.Hour))},
		},
	}
	for _, s := range steps {
		clk.Set(s.at)
		if err := st.ApplySuppressions(t.Context(), s.listed, s.removed, driver.SyncMark{Epoch: "e1", Version: int64(s.at.Sub(t0) / time.Hour)}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got, err := readmodel.New(st).Suppressions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, s.want, func(a, b campaign.Suppression) bool {
			return a.Phone == b.Phone && a.Reason == b.Reason && a.CreatedAt.Equal(b.CreatedAt)
		}) {
			t.Errorf("%s: list\n got %+v\nwant %+v", s.name, got, s.want)
		}
	}
	if m, err := st.SharedSuppressionsMark(t.Context()); err != nil || m != (driver.SyncMark{Epoch: "e1", Version: 3}) {
		t.Errorf("mark = %+v, %v; want e1 version 3", m, err)
	}
	// A bad number refuses the whole batch, mark included.
	if err := st.ApplySuppressions(t.Context(), []campaign.Suppression{{Phone: Phone(5)}, {Phone: "0151"}}, []string{Phone(2)}, driver.SyncMark{Epoch: "e1", Version: 9}); err == nil {
		t.Error("ApplySuppressions with a national number succeeded")
	}
	if _, ok, _ := isSuppressed(t, st, Phone(2)); !ok {
		t.Error("a refused batch removed a number")
	}
	if m, _ := st.SharedSuppressionsMark(t.Context()); m != (driver.SyncMark{Epoch: "e1", Version: 3}) {
		t.Errorf("mark after a refused batch = %+v, want e1 version 3", m)
	}
}

// TestSuppressionOutbox: what this host lists by itself waits to be
// pushed to the shared list — an opt-out from an answer as it is, a number
// listed by hand only if the shared list never knew it — and what came
// from the shared list, or left the list here, does not.
func (s suite) testSuppressionOutbox(t *testing.T) {
	clk := newFakeClock()
	st := s.openTest(t, clk)
	MustAccount(t, st, "a", campaign.TierActive, Limited(100, 100, 1000))
	c := MustCampaign(t, st, "optout", 3)
	cl := mustClaim(t, st, c.ID, "r1", t0)
	optOut := campaign.Outcome{Kind: campaign.OutcomeFailed, ErrorCode: 131050, Error: "user stopped marketing", Class: "permanent", Suppress: true}
	if err := record(t, st, cl, "r1", optOut, at(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: Phone(50), Reason: "by hand"}, {Phone: cl.Message.Phone}}); err != nil {
		t.Fatal(err)
	}
	list, err := st.ToPush(t.Context(), 100)
	if err != nil || len(list) != 2 {
		t.Fatalf("ToPush = %+v, %v; want the opt-out and the number listed by hand", list, err)
	}
	if p := list[0]; p.Phone != cl.Message.Phone || p.IfUnknown || p.Reason != fmt.Sprintf("error 131050 in campaign %d", c.ID) || !p.CreatedAt.Equal(at(time.Second)) {
		t.Errorf("the opt-out waits as %+v; want pushed whatever the shared list knew, with its reason and time", p)
	}

	steps := []struct {
		name string
		do   func() error
		want []string
	}{
		{"listed by hand, then pulled from the shared list: nothing to push",
			func() error {
				return st.ApplySuppressions(t.Context(), []campaign.Suppression{{Phone: Phone(50)}}, nil, driver.SyncMark{Epoch: "e1", Version: 1})
			},
			[]string{Phone(0)}},
		{"a pulled removal does not take off an opt-out not pushed yet",
			func() error {
				return st.ApplySuppressions(t.Context(), nil, []string{Phone(0)}, driver.SyncMark{Epoch: "e1", Version: 2})
			},
			[]string{Phone(0)}},
		{"listed by hand: pushed only if unknown there",
			func() error {
				_, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: Phone(60)}, {Phone: Phone(61)}})
				return err
			},
			[]string{Phone(0), Phone(60) + " if-unknown", Phone(61) + " if-unknown"}},
		{"a pulled removal takes off a number listed by hand",
			func() error {
				return st.ApplySuppressions(t.Context(), nil, []string{Phone(60)}, driver.SyncMark{Epoch: "e1", Version: 3})
			},
			[]string{Phone(0), Phone(61) + " if-unknown"}},
		{"taken off here: nothing to push",
			func() error { _, err := st.Unsuppress(t.Context(), []string{Phone(61)}); return err },
			[]string{Phone(0)}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := pending(t, st); !slices.Equal(got, s.want) {
			t.Errorf("%s: outbox %q, want %q", s.name, got, s.want)
		}
	}
	if _, ok, _ := isSuppressed(t, st, Phone(0)); !ok {
		t.Error("the opt-out was taken off the list by a pulled removal")
	}

	// Pushed takes out what was read; a number listed again since keeps
	// its new place.
	list, _ = st.ToPush(t.Context(), 100)
	if _, err := st.Suppress(t.Context(), []campaign.Suppression{{Phone: Phone(70)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Pushed(t.Context(), list[len(list)-1].Seq); err != nil {
		t.Fatal(err)
	}
	if got, want := pending(t, st), []string{Phone(70) + " if-unknown"}; !slices.Equal(got, want) {
		t.Errorf("after Pushed: outbox %q, want %q", got, want)
	}
	// After the shared list started anew: everything, if unknown there; a
	// number waiting keeps its place; the others go oldest first.
	if n, err := st.PushAll(t.Context()); err != nil || n != 2 {
		t.Errorf("PushAll = %d, %v; want the 2 numbers not waiting", n, err)
	}
	if got, want := pending(t, st), []string{Phone(70) + " if-unknown", Phone(50) + " if-unknown", Phone(0) + " if-unknown"}; !slices.Equal(got, want) {
		t.Errorf("after PushAll: outbox %q, want %q", got, want)
	}
}
func pending(t *testing.T, st driver.Driver) []string {
	t.Helper()
	list, err := st.ToPush(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list {
		s := p.Phone
		if p.IfUnknown {
			s += " if-unknown"
		}
		out = append(out, s)
	}
	return out
}

// isSuppressed reports whether phone is listed, and why, read with the
// suite's checks (the import's SuppressedIn is a read model).
func isSuppressed(t *testing.T, st driver.Driver, phone string) (reason string, ok bool, err error) {
	t.Helper()
	err = checked(st).QueryRowContext(t.Context(), `SELECT reason FROM suppressions WHERE phone = ?`, phone).Scan(&reason)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return reason, err == nil, err
}
