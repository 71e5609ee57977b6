package hostshare

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// DefaultEvery is the poll interval: how long a change on one host may
// take to reach the others.
const DefaultEvery = time.Second

// page is the most suppression changes applied in one transaction.
const page = 2000

// Sync keeps one host's database in step with what several hosts share
// through Redis (Shared): the suppression list and the hot configuration
// of tiers and the global limit. A sender run with --limits pulls the
// changes every poll and applies them to its own SQLite file, where every
// claim reads them — so a number suppressed on one host is not messaged by
// another after a poll, and a tier changed on one host paces every host
// within seconds. Before each pull it pushes what this host suppressed by
// itself (opt-outs the API reported, numbers listed without --limits) from
// its database's outbox to the shared list.
//
// It is a copy, never the only place a rule lives: when Redis can't be
// reached the loop logs it and tries again, and the host keeps (and its
// claims obey) everything it had already copied. Whether sending goes on
// meanwhile is the limits gate's decision (it fails closed), not this one's.
//
// Not safe for concurrent use: one loop (Run) per host process.
type Sync struct {
	shared *Shared
	st     driver.Driver
	log    *slog.Logger
	every  time.Duration
	after  func(time.Duration) <-chan time.Time
	wake   chan struct{} // Wake: pull (and push) now, not at the next poll

	// epoch and version of the shared suppression list already applied,
	// read from the store at the first pull (marked: read).
	marked  bool
	epoch   string
	version int64
	// links: how far the phone ↔ user id links were pushed and copied.
	links linkMarks
	// config is the shared configuration last applied (nil: none yet).
	config  *Config
	failing bool // the last pull failed (logged once until one succeeds)
}

// SyncOptions configure NewSync. Zero values get the defaults in brackets.
type SyncOptions struct {
	Every time.Duration // poll interval [DefaultEvery]
	// After waits for the next poll [time.After]; tests pass a clock's.
	After func(time.Duration) <-chan time.Time
	Log   *slog.Logger // [discard]
}

// NewSync returns the sync of st with shared.
func NewSync(shared *Shared, st driver.Driver, o SyncOptions) *Sync {
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Sync{shared: shared, st: st, log: o.Log, every: o.Every, after: o.After, wake: make(chan struct{}, 1)}
}

// Run pulls at once and then every poll until ctx ends. A failed pull is
// logged (once until a pull succeeds again) and tried again next poll.
func (s *Sync) Run(ctx context.Context) {
	for {
		s.pullLogged(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.after(s.every):
		case <-s.wake:
		}
	}
}

// Wake makes Run push and pull now rather than at the next poll: a
// receiver calls it when an inbound opt-out suppressed a number, so the
// other hosts have it within their next poll. It never blocks.
func (s *Sync) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Sync) pullLogged(ctx context.Context) {
	err := s.Pull(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil && !s.failing:
		s.failing = true
		s.log.Warn("shared suppression list and settings not updated; this host keeps what it copied before and tries again",
			"every", s.every, "err", oneLine(err))
	case err != nil:
		s.log.Debug("shared state still not readable", "err", oneLine(err))
	case s.failing:
		s.failing = false
		s.log.Info("shared suppression list and settings updated again")
	}
}

// oneLine is err's message with the lines errors.Join puts between the
// errors it joins replaced by "; ": a log line is one event, and a text
// handler would print the newline as a literal \n.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// Pull first pushes what this host suppressed by itself since the last
// push (see Push), then applies every change since the last pull: the
// suppression list's, oldest first in pages of one transaction each (with
// the mark of how far this database has copied), then the configuration's.
// Pushing first means a removal pulled never meets an opt-out of this host
// that the shared list has not seen yet.
func (s *Sync) Pull(ctx context.Context) error {
	if err := s.Push(ctx); err != nil {
		return errors.Join(err, s.pullConfig(ctx))
	}
	return errors.Join(s.pullSuppressions(ctx), s.syncLinks(ctx), s.pullConfig(ctx))
}

// Push puts the numbers this host suppressed by itself — opt-outs the API
// reported (error 131050, in an answer or a status webhook), numbers
// listed without --limits — on the shared list, from the database's outbox
// (store.ToPush), oldest first in pages; each page leaves the outbox once
// Redis has it. Recording an outcome never waits for this: the outbox is a
// table of the same database, and what Redis does not take now (down, a
// crash between the two) stays there for the next poll. Pushing a number
// twice changes nothing.
func (s *Sync) Push(ctx context.Context) error {
	for {
		list, err := s.st.ToPush(ctx, page)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return nil
		}
		push := make([]Pushed, len(list))
		for i, p := range list {
			push[i] = Pushed{IfUnknown: p.IfUnknown, Suppression: Suppression{
				Phone: p.Phone, Reason: p.Reason, CreatedAt: p.CreatedAt}}
		}
		added, err := s.shared.Push(ctx, push)
		if err != nil {
			return err
		}
		if err := s.st.Pushed(ctx, list[len(list)-1].Seq); err != nil {
			return err
		}
		if added > 0 {
			s.log.Info("numbers suppressed on this host put on the shared suppression list", "listed", added, "pushed", len(list))
		}
		if len(list) < page {
			return nil
		}
	}
}

func (s *Sync) pullSuppressions(ctx context.Context) error {
	if !s.marked {
		m, err := s.st.SharedSuppressionsMark(ctx)
		if err != nil {
			return err
		}
		s.epoch, s.version, s.marked = m.Epoch, m.Version, true
	}
	for {
		since := s.version
		epoch, changes, err := s.shared.SuppressionChanges(ctx, since, page)
		if err != nil {
			return err
		}
		if epoch != s.epoch {
			// A Redis that lost its data (or another one): its versions
			// start again, so read it all. Nothing this host copied before
			// is removed for being absent there — only a removal recorded
			// in the log removes a number.
			if s.epoch != "" {
				// Every host puts its own list up again (numbers the new
				// list already knows excepted), at the next push.
				n, err := s.st.PushAll(ctx)
				if err != nil {
					return err
				}
				s.log.Warn("the shared suppression list was started anew (Redis lost its data?); numbers this host had stay suppressed here and are put on the new list",
					"had_version", since, "to_push", n)
			}
			s.epoch, s.version = epoch, 0
			if since != 0 {
				// Recorded, so a restart does not warn again.
				if err := s.st.ApplySuppressions(ctx, nil, nil, driver.SyncMark{Epoch: epoch}); err != nil {
					return fmt.Errorf("copy the shared suppression list: %w", err)
				}
				continue
			}
		}
		if len(changes) == 0 {
			return nil
		}
		var (
			listed  []campaign.Suppression
			removed []string
		)
		for _, c := range changes {
			if c.Removed {
				removed = append(removed, c.Phone)
			} else {
				listed = append(listed, campaign.Suppression{Phone: c.Phone, Reason: c.Reason, CreatedAt: c.CreatedAt})
			}
		}
		mark := driver.SyncMark{Epoch: s.epoch, Version: changes[len(changes)-1].Version}
		if err := s.st.ApplySuppressions(ctx, listed, removed, mark); err != nil {
			return fmt.Errorf("copy the shared suppression list: %w", err)
		}
		s.version = mark.Version
		s.log.Debug("shared suppression list copied", "listed", len(listed), "removed", len(removed), "version", s.version)
		if len(changes) < page {
			return nil
		}
	}
}

func (s *Sync) pullConfig(ctx context.Context) error {
	c, err := s.shared.Config(ctx)
	if err != nil {
		return err
	}
	if s.config != nil && sameConfig(*s.config, c) {
		return nil
	}
	if err := s.applyConfig(ctx, c); err != nil {
		return err
	}
	s.config = &c
	return nil
}

// applyConfig sets what differs locally. A tier or the global limit never
// set through Redis stays as this host has it.
func (s *Sync) applyConfig(ctx context.Context, c Config) error {
	tiers, err := readmodel.New(s.st).Tiers(ctx)
	if err != nil {
		return err
	}
	for _, t := range tiers {
		want, ok := c.Tiers[t.Name]
		if !ok || want == t.Limits {
			continue
		}
		if err := s.st.SetTier(ctx, t.Name, want); err != nil {
			return fmt.Errorf("apply the shared settings of tier %s: %w", t.Name, err)
		}
		s.log.Info("tier changed on another host", "tier", t.Name, "rate", want.Rate, "burst", want.Burst, "daily_cap", want.DailyCap)
	}
	if c.Global == nil {
		return nil
	}
	l, _, on, err := readmodel.New(s.st).GlobalLimit(ctx)
	if err != nil {
		return err
	}
	if on == c.Global.On && (!on || l == c.Global.Limit) {
		return nil
	}
	if err := s.st.SetGlobalLimit(ctx, c.Global.On, c.Global.Limit); err != nil {
		return fmt.Errorf("apply the shared global limit: %w", err)
	}
	s.log.Info("global limit changed on another host", "on", c.Global.On, "rate", c.Global.Limit.Rate, "burst", c.Global.Limit.Burst)
	return nil
}

func sameConfig(a, b Config) bool {
	return a.Version == b.Version && maps.Equal(a.Tiers, b.Tiers) && sameGlobal(a.Global, b.Global)
}

func sameGlobal(a, b *GlobalSetting) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
