package top

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wasend/wasend/internal/campaign"
)

// press types one key into m and carries out what it starts (a move, then
// the refresh that echoes it), as the program would; it reports whether
// the key quits.
func press(t *testing.T, m *Model, key string) (quit bool) {
	t.Helper()
	var k tea.KeyMsg
	switch key {
	case "up":
		k = tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		k = tea.KeyMsg{Type: tea.KeyDown}
	case "ctrl+c":
		k = tea.KeyMsg{Type: tea.KeyCtrlC}
	default:
		k = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(key)}
	}
	_, cmd := m.Update(k)
	for cmd != nil {
		msg := cmd()
		if _, ok := msg.(tea.QuitMsg); ok {
			return true
		}
		_, cmd = m.Update(msg)
	}
	return false
}

// TestKeys: the keys make the operator's moves on the real database —
// pause, resume, a cancel answered no and one answered yes — on the
// selected campaign, and each says what it did; q and Ctrl-C quit.
func TestKeys(t *testing.T) {
	fx := seed(t)
	ctx := context.Background()
	state := func(id int64) campaign.CampaignState {
		t.Helper()
		c, err := fx.st.Campaign(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c.State
	}
	m := fx.model()
	m.Refresh()
	for _, step := range []struct {
		keys     []string
		id       int64
		want     campaign.CampaignState
		note     string
		selected int64
		asking   bool
	}{
		{keys: []string{"p"}, id: fx.c1, want: campaign.CampaignPaused, note: "campaign 1 paused", selected: fx.c1},
		{keys: []string{"p"}, id: fx.c1, want: campaign.CampaignPaused, note: "campaign 1 was already paused", selected: fx.c1},
		{keys: []string{"r"}, id: fx.c1, want: campaign.CampaignRunning, note: "campaign 1 unpaused", selected: fx.c1},
		{keys: []string{"r"}, id: fx.c1, want: campaign.CampaignRunning, note: "not paused: nothing to resume", selected: fx.c1},
		// j selects campaign 2 (paused); k and ↑ go back, ↓ stays on the last.
		{keys: []string{"j", "down"}, id: fx.c2, want: campaign.CampaignPaused, selected: fx.c2},
		{keys: []string{"c"}, id: fx.c2, want: campaign.CampaignPaused, note: "", selected: fx.c2, asking: true},
		{keys: []string{"n"}, id: fx.c2, want: campaign.CampaignPaused, note: "campaign 2 not cancelled", selected: fx.c2},
		{keys: []string{"c", "y"}, id: fx.c2, want: campaign.CampaignCancelled, note: "campaign 2 cancelled", selected: fx.c2},
		{keys: []string{"p"}, id: fx.c2, want: campaign.CampaignCancelled, note: "campaign 2 can't pause: it has ended", selected: fx.c2},
		{keys: []string{"k"}, id: fx.c1, want: campaign.CampaignRunning, selected: fx.c1},
		{keys: []string{"j", "up"}, id: fx.c1, want: campaign.CampaignRunning, selected: fx.c1},
	} {
		for _, k := range step.keys {
			if press(t, m, k) {
				t.Fatalf("%v: %q quit", step.keys, k)
			}
		}
		if got := state(step.id); got != step.want {
			t.Errorf("after %v: campaign %d is %s, want %s", step.keys, step.id, got, step.want)
		}
		if m.selected != step.selected {
			t.Errorf("after %v: campaign %d selected, want %d", step.keys, m.selected, step.selected)
		}
		if !strings.Contains(m.note, step.note) {
			t.Errorf("after %v: note %q, want %q in it", step.keys, m.note, step.note)
		}
		view := m.View()
		if asking := strings.Contains(view, "for good? Its"); asking != step.asking {
			t.Errorf("after %v: asking %v, want %v:\n%s", step.keys, asking, step.asking, view)
		}
		// The screen shows what the database holds after the move.
		if c, ok := m.current(); !ok || c.State != string(step.want) {
			t.Errorf("after %v: the screen says %s, the database %s", step.keys, c.State, step.want)
		}
	}
	if state(fx.c1) != campaign.CampaignRunning {
		t.Errorf("campaign 1 moved with campaign 2 selected")
	}
	for _, k := range []string{"q", "ctrl+c"} {
		if !press(t, m, k) {
			t.Errorf("%s did not quit", k)
		}
	}
	// Ctrl-C quits while a cancel asks, and answers nothing.
	press(t, m, "c")
	if !press(t, m, "ctrl+c") {
		t.Error("Ctrl-C did not quit while asking")
	}
	if state(fx.c1) != campaign.CampaignRunning {
		t.Errorf("campaign 1 is %s after Ctrl-C at the question", state(fx.c1))
	}
}
