package top

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/report"
)

// key applies a key press: ↑/↓ (k/j) select, p pauses, r resumes, c asks
// to cancel (y confirms), ? shows the help line, q and Ctrl-C quit.
func (m *Model) key(k string) tea.Cmd {
	if k == "ctrl+c" {
		return tea.Quit
	}
	if id := m.confirm; id != 0 {
		m.confirm = 0
		if k == "y" || k == "Y" {
			return m.move(id, "cancel")
		}
		m.note = fmt.Sprintf("campaign %d not cancelled", id)
		return nil
	}
	switch k {
	case "q":
		return tea.Quit
	case "up", "k":
		m.step(-1)
	case "down", "j":
		m.step(1)
	case "?":
		m.help = !m.help
	case "p", "r", "c":
		c, ok := m.current()
		if !ok {
			m.note = "no campaign to " + map[string]string{"p": "pause", "r": "resume", "c": "cancel"}[k]
			return nil
		}
		switch k {
		case "p":
			return m.move(c.ID, "pause")
		case "r":
			if c.State != string(campaign.CampaignPaused) {
				m.note = fmt.Sprintf("campaign %d is %s, not paused: nothing to resume", c.ID, c.State)
				return nil
			}
			return m.move(c.ID, "resume")
		}
		m.confirm = c.ID
		m.note = ""
	}
	return nil
}

// move makes an operator's move on campaign id and says what it did.
func (m *Model) move(id int64, what string) tea.Cmd {
	return func() tea.Msg {
		var note string
		switch what {
		case "pause":
			was, err := m.o.Moves.PauseCampaign(m.ctx, id, campaign.PausedByOperator)
			switch {
			case err != nil:
				note = moveError(id, what, err)
			case was == campaign.CampaignPaused:
				note = fmt.Sprintf("campaign %d was already paused", id)
			default:
				note = fmt.Sprintf("campaign %d paused: a run sending it stops within seconds (r resumes)", id)
			}
		case "resume":
			reason, err := m.o.Moves.ResumeCampaign(m.ctx, id)
			switch {
			case err != nil:
				note = moveError(id, what, err)
			case reason != "":
				note = fmt.Sprintf("campaign %d unpaused (was: %s); send it with `wasend campaign resume %d%s`", id, reason, id, m.o.Flags)
			default:
				note = fmt.Sprintf("campaign %d unpaused; send it with `wasend campaign resume %d%s`", id, id, m.o.Flags)
			}
		case "cancel":
			was, err := m.o.Moves.CancelCampaign(m.ctx, id)
			switch {
			case err != nil:
				note = moveError(id, what, err)
			case was == campaign.CampaignCancelled:
				note = fmt.Sprintf("campaign %d was already cancelled", id)
			default:
				note = fmt.Sprintf("campaign %d cancelled: its pending messages will never be sent", id)
			}
		}
		return movedMsg{note: note}
	}
}

func moveError(id int64, what string, err error) string {
	if errors.Is(err, campaign.ErrFinal) {
		return fmt.Sprintf("campaign %d can't %s: it has ended", id, what)
	}
	return fmt.Sprintf("campaign %d: %s failed: %v", id, what, err)
}

// shown are the campaigns the dashboard lists: every one but those that
// ended more than an hour ago (one that ends while watched stays a while).
func (m *Model) shown() []report.Campaign {
	var out []report.Campaign
	for _, c := range m.status.Campaigns {
		ended := c.State == string(campaign.CampaignFinished) || c.State == string(campaign.CampaignCancelled)
		if ended && (c.FinishedAt == nil || m.at.Sub(*c.FinishedAt) > endedShown) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// endedShown is how long a finished or cancelled campaign stays listed.
const endedShown = time.Hour

// current is the selected campaign.
func (m *Model) current() (report.Campaign, bool) {
	cs := m.shown()
	if i := slices.IndexFunc(cs, func(c report.Campaign) bool { return c.ID == m.selected }); i >= 0 {
		return cs[i], true
	}
	return report.Campaign{}, false
}

// keepSelection selects the first campaign when the selected one is gone.
func (m *Model) keepSelection() {
	if _, ok := m.current(); ok {
		return
	}
	m.selected = 0
	if cs := m.shown(); len(cs) > 0 {
		m.selected = cs[0].ID
	}
}

// step moves the selection by d rows, staying on the list.
func (m *Model) step(d int) {
	cs := m.shown()
	if len(cs) == 0 {
		return
	}
	i := slices.IndexFunc(cs, func(c report.Campaign) bool { return c.ID == m.selected })
	m.selected = cs[min(max(i+d, 0), len(cs)-1)].ID
}
