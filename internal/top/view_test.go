package top

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/mattn/go-runewidth"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
)

// TestViewFits: with more campaigns and accounts than the screen holds, at
// widths from 40 to 200, the view keeps to the terminal — no line wider
// than it, no more lines than it has — keeps the selected campaign on the
// screen, and says how many rows it hides.
func TestViewFits(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	var st report.Status
	st.Database = "/var/lib/wasend/a-rather-long-directory-name/wasend.db"
	for i := 1; i <= 30; i++ {
		st.Campaigns = append(st.Campaigns, report.Campaign{ID: int64(i), Name: fmt.Sprintf("campaign-with-a-long-name-%02d.csv", i),
			State: "waiting for shared limits", Total: 1000, Sent: 10 * i, Pending: 1000 - 10*i})
	}
	for i := 1; i <= 20; i++ {
		st.Accounts = append(st.Accounts, report.AccountStatus{Account: report.Account{Name: fmt.Sprintf("account-%02d", i),
			State: "restricted until 12-01 14:00", Rate: 80, EffectiveRate: 40, DailyCap: 100000, Tier: "active", Portfolio: "a-portfolio"}})
	}
	for _, size := range [][2]int{{40, 10}, {60, 15}, {80, 24}, {120, 40}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := New(context.Background(), Options{
				Status: func(context.Context) (Reading, error) { return Reading{Status: st}, nil },
				Inbox:  func(context.Context) (readmodel.InboxBacklog, error) { return readmodel.InboxBacklog{}, nil },
				Now:    func() time.Time { return now },
				Loc:    time.UTC,
			})
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m.Refresh()
			m.selected = 25
			m.note = strings.Repeat("a long note that wraps ", 20)
			view := m.View()
			lines := strings.Split(view, "\n")
			if len(lines) > size[1] {
				t.Errorf("%d lines on a screen of %d:\n%s", len(lines), size[1], view)
			}
			for i, l := range lines {
				if w := runewidth.StringWidth(l); w > size[0] {
					t.Errorf("line %d is %d columns wide at %d: %q", i+1, w, size[0], l)
				}
			}
			if !strings.Contains(view, ">  25") {
				t.Errorf("the selected campaign 25 is not on the screen:\n%s", view)
			}
			if !strings.Contains(view, "more") {
				t.Errorf("no line says rows are hidden:\n%s", view)
			}
		})
	}
}

// TestSlowReadsRefreshLessOften: a refresh whose reads take more than 4 %
// of the interval pushes the next one back, so slow status reads (a busy
// campaign of millions) cost no more of a core than fast ones.
func TestSlowReadsRefreshLessOften(t *testing.T) {
	for _, tt := range []struct {
		cost, want time.Duration
	}{
		{time.Millisecond, time.Second},
		{40 * time.Millisecond, time.Second},
		{100 * time.Millisecond, 2500 * time.Millisecond},
		{time.Second, 25 * time.Second},
	} {
		m := New(context.Background(), Options{Status: func(context.Context) (Reading, error) { return Reading{}, nil }})
		_, cmd := m.Update(readMsg{next: true, cost: tt.cost, at: time.Now()})
		if cmd == nil {
			t.Fatalf("cost %v: no next refresh", tt.cost)
		}
		if m.every != tt.want {
			t.Errorf("reads of %v: next refresh in %v, want %v", tt.cost, m.every, tt.want)
		}
	}
}

// TestSharedTokens: under --limits the accounts' tokens are the shared
// ones; an account Redis gave no figure for shows "-", as in status, and
// the screen says why.
func TestSharedTokens(t *testing.T) {
	st := report.Status{Accounts: []report.AccountStatus{
		{Account: report.Account{Name: "a-01", State: "ok", Tokens: 3, TokensShared: true, Rate: 1, EffectiveRate: 1, DailyCap: 10}},
		{Account: report.Account{Name: "b-02", State: "ok", Tokens: 7, Rate: 1, EffectiveRate: 1, DailyCap: 10}},
	}}
	m := New(context.Background(), Options{Status: func(context.Context) (Reading, error) {
		return Reading{Status: st, Shared: true, SharedWhy: "Redis at redis://h:6379/0 did not answer"}, nil
	}})
	m.Refresh()
	view := m.View()
	for _, want := range []string{"tokens shared between hosts", "not all shown: Redis at redis://h:6379/0 did not answer"} {
		if !strings.Contains(view, want) {
			t.Errorf("no %q:\n%s", want, view)
		}
	}
	for name, tokens := range map[string]string{"a-01": "3.0", "b-02": "-"} {
		i := strings.Index(view, name)
		if i < 0 || !strings.HasPrefix(strings.Fields(view[i:])[2], tokens) {
			t.Errorf("%s: tokens not %q:\n%s", name, tokens, view)
		}
	}
}

// TestReadErrors: a refresh that fails says so and keeps the last figures;
// one that fails before any figure says it can't read.
func TestReadErrors(t *testing.T) {
	fail := errors.New("database is locked")
	var err error
	m := New(context.Background(), Options{
		Status: func(context.Context) (Reading, error) {
			return Reading{Status: report.Status{Campaigns: []report.Campaign{{ID: 7, Name: "kept.csv", State: "running"}}}}, err
		},
		Now: func() time.Time { return time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC) },
		Loc: time.UTC,
	})
	err = fail
	m.Refresh()
	if v := m.View(); !strings.Contains(v, "can't read the status: database is locked") {
		t.Errorf("first read failed:\n%s", v)
	}
	err = nil
	m.Refresh()
	err = fail
	m.Refresh()
	v := m.View()
	for _, want := range []string{"refresh failed (figures of 14:00:00): database is locked", "kept.csv"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q after a failed refresh:\n%s", want, v)
		}
	}
}
