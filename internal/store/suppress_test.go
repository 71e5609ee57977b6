package store

import (
	"maps"
	"slices"
	"testing"
	"time"
)

func TestSuppressions(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	sp := func(phone, reason string, first time.Time) Suppression {
		return Suppression{Phone: phone, Reason: reason, CreatedAt: first}
	}
	// Each step runs at its instant on the same store; want is the whole
	// list afterwards.
	steps := []struct {
		name        string
		at          time.Time
		add         []Suppression
		remove      []string
		wantAdded   int
		wantRemoved int
		want        []Suppression
	}{
		{
			name: "add", at: at(0),
			add:       []Suppression{{Phone: phone(2), Reason: "STOP received"}, {Phone: phone(1)}},
			wantAdded: 2,
			want:      []Suppression{sp(phone(1), "", at(0)), sp(phone(2), "STOP received", at(0))},
		},
		{
			name: "re-add keeps first time; a given reason replaces, an empty one does not", at: at(time.Hour),
			add:       []Suppression{{Phone: phone(1), Reason: "bounced"}, {Phone: phone(2)}, {Phone: phone(3)}},
			wantAdded: 1,
			want: []Suppression{sp(phone(1), "bounced", at(0)), sp(phone(2), "STOP received", at(0)),
				sp(phone(3), "", at(time.Hour))},
		},
		{
			name: "the same number twice in one batch is added once", at: at(2 * time.Hour),
			add:       []Suppression{{Phone: phone(4), Reason: "a"}, {Phone: phone(4), Reason: "b"}},
			wantAdded: 1,
			want: []Suppression{sp(phone(1), "bounced", at(0)), sp(phone(2), "STOP received", at(0)),
				sp(phone(3), "", at(time.Hour)), sp(phone(4), "b", at(2*time.Hour))},
		},
		{
			name: "remove listed, unlisted and repeated", at: at(3 * time.Hour),
			remove:      []string{phone(3), phone(9), phone(1), phone(1)},
			wantRemoved: 2,
			want:        []Suppression{sp(phone(2), "STOP received", at(0)), sp(phone(4), "b", at(2*time.Hour))},
		},
		{
			name: "removed then added again starts anew", at: at(4 * time.Hour),
			add:       []Suppression{{Phone: phone(1)}},
			wantAdded: 1,
			want: []Suppression{sp(phone(1), "", at(4*time.Hour)), sp(phone(2), "STOP received", at(0)),
				sp(phone(4), "b", at(2*time.Hour))},
		},
		{name: "empty batches", at: at(5 * time.Hour), add: []Suppression{}, remove: []string{},
			want: []Suppression{sp(phone(1), "", at(4*time.Hour)), sp(phone(2), "STOP received", at(0)),
				sp(phone(4), "b", at(2*time.Hour))}},
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
		got, err := st.Suppressions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, s.want, func(a, b Suppression) bool {
			return a.Phone == b.Phone && a.Reason == b.Reason && a.CreatedAt.Equal(b.CreatedAt)
		}) {
			t.Errorf("%s: list\n got %+v\nwant %+v", s.name, got, s.want)
		}
	}
}

func TestIsSuppressed(t *testing.T) {
	st := openTest(t, newFakeClock())
	if _, err := st.Suppress(t.Context(), []Suppression{{Phone: phone(1), Reason: "STOP"}, {Phone: phone(2)}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		phone      string
		wantReason string
		wantOK     bool
	}{
		{phone(1), "STOP", true},
		{phone(2), "", true},
		{phone(3), "", false},
		{"015100000001", "", false}, // the list holds E.164 only
	} {
		reason, ok, err := st.IsSuppressed(t.Context(), c.phone)
		if err != nil || reason != c.wantReason || ok != c.wantOK {
			t.Errorf("IsSuppressed(%s) = %q, %v, %v; want %q, %v", c.phone, reason, ok, err, c.wantReason, c.wantOK)
		}
	}
}

func TestSuppressRejectsUnnormalised(t *testing.T) {
	st := openTest(t, newFakeClock())
	for _, bad := range []string{"", "0151 00000001", "4915100000001", "+", "+0151", "+49 151", "+1234567890123456"} {
		_, err := st.Suppress(t.Context(), []Suppression{{Phone: phone(1)}, {Phone: bad}})
		if err == nil {
			t.Errorf("Suppress(%q) succeeded", bad)
		}
	}
	// The batch is all or nothing: the good number went in with none of them.
	if n := countRows(t, st, `SELECT count(*) FROM suppressions`); n != 0 {
		t.Errorf("%d rows after rejected batches, want 0", n)
	}
}

func TestSuppressedIn(t *testing.T) {
	st := openTest(t, newFakeClock())
	if _, err := st.Suppress(t.Context(), []Suppression{{Phone: phone(2), Reason: "STOP received"}, {Phone: phone(700)}}); err != nil {
		t.Fatal(err)
	}
	var ask []string
	for i := range 1200 { // more than one statement's worth
		ask = append(ask, phone(i))
	}
	got, err := st.SuppressedIn(t.Context(), ask)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{phone(2): "STOP received", phone(700): ""}
	if !maps.Equal(got, want) {
		t.Errorf("SuppressedIn = %v, want %v", got, want)
	}
}

func TestApplySuppressions(t *testing.T) {
	clk := newFakeClock()
	st := openTest(t, clk)
	if m, err := st.SharedSuppressionsMark(t.Context()); err != nil || m != (SyncMark{}) {
		t.Fatalf("mark of a new database = %+v, %v; want none", m, err)
	}
	sp := func(phone, reason string, first time.Time) Suppression {
		return Suppression{Phone: phone, Reason: reason, CreatedAt: first}
	}
	if _, err := st.Suppress(t.Context(), []Suppression{{Phone: phone(1), Reason: "local"}, {Phone: phone(2), Reason: "STOP"}}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		at      time.Time
		listed  []Suppression
		removed []string
		want    []Suppression
	}{
		{
			name: "the other copy's reason wins, even empty; the earlier time stays", at: at(time.Hour),
			listed: []Suppression{sp(phone(1), "", at(30*time.Minute)), sp(phone(2), "bounced", at(-time.Hour)), sp(phone(3), "new", at(2*time.Hour))},
			want:   []Suppression{sp(phone(1), "", at(0)), sp(phone(2), "bounced", at(-time.Hour)), sp(phone(3), "new", at(2*time.Hour))},
		},
		{
			name: "removed, listed or not; no time given is now", at: at(3 * time.Hour),
			listed:  []Suppression{{Phone: phone(4)}},
			removed: []string{phone(1), phone(9)},
			want:    []Suppression{sp(phone(2), "bounced", at(-time.Hour)), sp(phone(3), "new", at(2*time.Hour)), sp(phone(4), "", at(3*time.Hour))},
		},
	}
	for _, s := range steps {
		clk.Set(s.at)
		if err := st.ApplySuppressions(t.Context(), s.listed, s.removed, SyncMark{"e1", int64(s.at.Sub(t0) / time.Hour)}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got, err := st.Suppressions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, s.want, func(a, b Suppression) bool {
			return a.Phone == b.Phone && a.Reason == b.Reason && a.CreatedAt.Equal(b.CreatedAt)
		}) {
			t.Errorf("%s: list\n got %+v\nwant %+v", s.name, got, s.want)
		}
	}
	if m, err := st.SharedSuppressionsMark(t.Context()); err != nil || m != (SyncMark{"e1", 3}) {
		t.Errorf("mark = %+v, %v; want e1 version 3", m, err)
	}
	// A bad number refuses the whole batch, mark included.
	if err := st.ApplySuppressions(t.Context(), []Suppression{{Phone: phone(5)}, {Phone: "0151"}}, []string{phone(2)}, SyncMark{"e1", 9}); err == nil {
		t.Error("ApplySuppressions with a national number succeeded")
	}
	if _, ok, _ := st.IsSuppressed(t.Context(), phone(2)); !ok {
		t.Error("a refused batch removed a number")
	}
	if m, _ := st.SharedSuppressionsMark(t.Context()); m != (SyncMark{"e1", 3}) {
		t.Errorf("mark after a refused batch = %+v, want e1 version 3", m)
	}
}
