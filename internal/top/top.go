// Package top is `wasend top`: a live terminal dashboard (Bubble Tea) of
// the campaigns, the accounts, the portfolios' reach and the webhook
// inbox, read each second the way `status` reads them (report.Status),
// with keys for the operator's moves on the selected campaign. It computes
// no figure of its own but the pace between two refreshes; what it shows
// is report's, cut to the terminal.
package top

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/report"
	"github.com/wasend/wasend/internal/ui"
)

// Operator is the operator's moves on a campaign, the ones `campaign
// pause`, `resume` and `cancel` make (*store.Store has them).
type Operator interface {
	PauseCampaign(ctx context.Context, id int64, reason string) (campaign.CampaignState, error)
	ResumeCampaign(ctx context.Context, id int64) (string, error)
	CancelCampaign(ctx context.Context, id int64) (campaign.CampaignState, error)
}

// Reading is one refresh's status.
type Reading struct {
	report.Status
	// Shared: the accounts' tokens are the buckets hosts share through
	// Redis (--limits); an account without TokensShared has no figure
	// then, and SharedWhy says why (Redis did not answer, holds no state).
	Shared    bool
	SharedWhy string
}

// Options are what a dashboard reads and moves through.
type Options struct {
	// Status is one refresh's status, as `status` reads it (under --limits
	// with the shared tokens).
	Status func(ctx context.Context) (Reading, error)
	// Inbox is the webhook inbox's backlog.
	Inbox func(ctx context.Context) (readmodel.InboxBacklog, error)
	Moves Operator
	// Now is the clock the figures are read at; Loc the zone times show in.
	Now func() time.Time
	Loc *time.Location
	// Every is the time between refreshes; 1 s when 0.
	Every time.Duration
	// Flags are the global flags the commands it suggests carry (--db …).
	Flags string
}

// Model is the dashboard's state: the last refresh, the selection, the
// question being asked and the last move's answer.
type Model struct {
	ctx context.Context
	o   Options

	width, height int

	status Reading
	inbox  readmodel.InboxBacklog
	at     time.Time // when status was read; zero before the first read
	err    error     // the last refresh's error; the previous figures stay

	selected int64 // the selected campaign's id; 0: the first shown
	confirm  int64 // the campaign a cancel asks about; 0: no question
	help     bool
	note     string // what the last key did

	paces map[int64][]sample
	every time.Duration // the time to the next refresh: Every, or more when reads are slow
}

// sample is a campaign's finished rows at one refresh: the pace is the
// difference between two.
type sample struct {
	at   time.Time
	done int
}

// paceWindow is how far back the pace looks: long enough to smooth a
// batch's bursts, short enough to follow a pause (the progress line's own).
const paceWindow = 15 * time.Second

// New returns a dashboard that reads with o under ctx.
func New(ctx context.Context, o Options) *Model {
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Loc == nil {
		o.Loc = time.Local
	}
	return &Model{ctx: ctx, o: o, width: 80, height: 24, paces: map[int64][]sample{}, every: o.Every}
}

// readMsg is one refresh's result; next says it came from the timer, which
// then starts again (a move's own refresh does not start a second timer).
// cost is how long the reads took.
type readMsg struct {
	status Reading
	inbox  readmodel.InboxBacklog
	at     time.Time
	err    error
	next   bool
	cost   time.Duration
}

// costShare bounds the reads to 1/costShare of the time (4 %): a refresh
// that takes longer than Every/costShare pushes the next one back, so a
// database whose status reads are slow (a busy campaign of millions) costs
// no more than a fast one.
const costShare = 25

type tickMsg struct{}

// movedMsg is what a move did, said in a line.
type movedMsg struct {
	note string
}

// Init reads at once.
func (m *Model) Init() tea.Cmd { return m.read(true) }

// read reads the status and the inbox.
func (m *Model) read(next bool) tea.Cmd {
	return func() tea.Msg {
		start := time.Now() // the reads' cost, whatever clock the figures are read at
		msg := readMsg{at: m.o.Now(), next: next}
		msg.status, msg.err = m.o.Status(m.ctx)
		if msg.err == nil && m.o.Inbox != nil {
			msg.inbox, msg.err = m.o.Inbox(m.ctx)
		}
		msg.cost = time.Since(start)
		return msg
	}
}

// Refresh reads now and applies what it read (tests, and a move's echo).
func (m *Model) Refresh() {
	m.Update(m.read(false)())
}

// Update applies a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case readMsg:
		m.apply(msg)
		if msg.next {
			m.every = max(m.o.Every, msg.cost*costShare)
			return m, tea.Tick(m.every, func(time.Time) tea.Msg { return tickMsg{} })
		}
	case tickMsg:
		return m, m.read(true)
	case movedMsg:
		m.note = msg.note
		return m, m.read(false)
	case tea.KeyMsg:
		return m, m.key(msg.String())
	}
	return m, nil
}

// apply keeps a refresh: its figures, or its error beside the last ones.
func (m *Model) apply(msg readMsg) {
	m.err = msg.err
	if msg.err != nil {
		return
	}
	m.status, m.inbox, m.at = msg.status, msg.inbox, msg.at
	seen := map[int64]bool{}
	for _, c := range m.status.Campaigns {
		seen[c.ID] = true
		s := append(m.paces[c.ID], sample{msg.at, done(c)})
		for len(s) > 2 && msg.at.Sub(s[1].at) >= paceWindow {
			s = s[1:]
		}
		m.paces[c.ID] = s
	}
	for id := range m.paces {
		if !seen[id] {
			delete(m.paces, id)
		}
	}
	m.keepSelection()
}

// done is a campaign's rows that no longer wait: its progress.
func done(c report.Campaign) int { return c.Total - c.Pending - c.Sending }

// pace is a campaign's rows done per second over the last refreshes, and
// false when there is none to show (too short a span, nothing done).
func (m *Model) pace(id int64) (float64, bool) {
	s := m.paces[id]
	if len(s) < 2 {
		return 0, false
	}
	first, last := s[0], s[len(s)-1]
	return ui.MeasuredRate(last.done-first.done, last.at.Sub(first.at))
}
