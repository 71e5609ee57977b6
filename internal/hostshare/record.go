package hostshare

import (
	"context"
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/ratelimit"
	"github.com/wasend/wasend/internal/readmodel"
)

// RecordDatabase is this database's side of the record: its suppression
// list, tiers and global bucket, and the read models' source for the
// list and the opt-ins. driver.Driver is one.
type RecordDatabase interface {
	readmodel.Source
	Suppress(ctx context.Context, list []campaign.Suppression) (added int, err error)
	Unsuppress(ctx context.Context, phones []string) (removed int, err error)
	SetTier(ctx context.Context, name string, l campaign.Limits) error
	SetGlobalLimit(ctx context.Context, on bool, l ratelimit.Limit) error
}

// Record is the record of the suppression list and the tier and global
// settings, the one place that says where it is: with --limits (a Shared)
// Redis is the record and this database follows — a change goes to Redis
// first, and a failure there changes nothing here; without, the database.
// Reads give what the record has; the settings also say what this database
// still has until a sender copies the change (Sync).
type Record struct {
	st RecordDatabase
	sh *Shared // nil: the database is the record
}

// NewRecord is the record of st, or of sh (and st following it) when sh
// is not nil.
func NewRecord(st RecordDatabase, sh *Shared) *Record { return &Record{st: st, sh: sh} }

// Shared reports whether Redis is the record (--limits).
func (r *Record) Shared() bool { return r.sh != nil }

// DatabaseError is a change this database did not take. Under --limits it
// comes after the change was recorded in Redis, which senders copy.
type DatabaseError struct{ Err error }

func (e *DatabaseError) Error() string { return e.Err.Error() }
func (e *DatabaseError) Unwrap() error { return e.Err }

// Suppress lists numbers and returns how many were not listed before (on
// the list of record: the counts are its). now is when they are listed.
func (r *Record) Suppress(ctx context.Context, list []campaign.Suppression, now time.Time) (added int, err error) {
	if r.sh == nil {
		return r.st.Suppress(ctx, list)
	}
	shared := make([]Suppression, len(list))
	for i, sp := range list {
		shared[i] = Suppression{Phone: sp.Phone, Reason: sp.Reason}
	}
	added, err = r.sh.Suppress(ctx, shared, now)
	if err != nil {
		return 0, fmt.Errorf("%w (nothing changed in this database; run it again once Redis answers)", err)
	}
	if _, err := r.st.Suppress(ctx, list); err != nil {
		return 0, fmt.Errorf("listed on the shared list, not in this database (its senders copy it from there): %w", err)
	}
	return added, nil
}

// Unsuppress takes numbers off the list and returns how many were on the
// list of record.
func (r *Record) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	if r.sh == nil {
		return r.st.Unsuppress(ctx, phones)
	}
	if removed, err = r.sh.Unsuppress(ctx, phones); err != nil {
		return 0, fmt.Errorf("%w (nothing changed in this database; run it again once Redis answers)", err)
	}
	if _, err := r.st.Unsuppress(ctx, phones); err != nil {
		return 0, fmt.Errorf("removed from the shared list, not from this database (its senders copy it from there): %w", err)
	}
	return removed, nil
}

// Suppressions is the list of record, ordered by phone.
func (r *Record) Suppressions(ctx context.Context) ([]campaign.Suppression, error) {
	if r.sh == nil {
		return readmodel.New(r.st).Suppressions(ctx)
	}
	shared, err := r.sh.Suppressions(ctx)
	if err != nil {
		return nil, err
	}
	list := make([]campaign.Suppression, len(shared))
	for i, sp := range shared {
		list[i] = campaign.Suppression{Phone: sp.Phone, Reason: sp.Reason, CreatedAt: sp.CreatedAt}
	}
	return list, nil
}

// TierSetting is a tier as the record has it.
type TierSetting struct {
	// Tier is this database's: its settings and the built-in defaults.
	campaign.Tier
	// Shared: under --limits, the tier was set for every host; Limits is
	// then the shared settings, else this database's (a host's own).
	Shared bool
	Limits campaign.Limits
}

// Tiers lists the tiers with their settings of record.
func (r *Record) Tiers(ctx context.Context) ([]TierSetting, error) {
	tiers, err := readmodel.New(r.st).Tiers(ctx)
	if err != nil {
		return nil, err
	}
	var shared map[string]campaign.Limits
	if r.sh != nil {
		c, err := r.sh.Config(ctx)
		if err != nil {
			return nil, err
		}
		shared = c.Tiers
	}
	out := make([]TierSetting, len(tiers))
	for i, t := range tiers {
		l, ok := shared[t.Name]
		if !ok {
			l = t.Limits
		}
		out[i] = TierSetting{Tier: t, Shared: ok, Limits: l}
	}
	return out, nil
}

// Tier is what a tier is set to: the shared settings under --limits when
// they have it, else this database's.
func (r *Record) Tier(ctx context.Context, name string) (campaign.Limits, error) {
	if r.sh != nil {
		c, err := r.sh.Config(ctx)
		if err != nil {
			return campaign.Limits{}, err
		}
		if l, ok := c.Tiers[name]; ok {
			return l, nil
		}
	}
	tiers, err := readmodel.New(r.st).Tiers(ctx)
	if err != nil {
		return campaign.Limits{}, err
	}
	for _, t := range tiers {
		if t.Name == name {
			return t.Limits, nil
		}
	}
	return campaign.Limits{}, fmt.Errorf("tier %q: %w", name, campaign.ErrNotFound)
}

// SetTier sets a tier's settings on the record, and in this database.
func (r *Record) SetTier(ctx context.Context, name string, l campaign.Limits) error {
	if r.sh != nil {
		if err := r.sh.SetTier(ctx, name, l); err != nil {
			return fmt.Errorf("%w (nothing changed in this database)", err)
		}
	}
	return r.st.SetTier(ctx, name, l)
}

// Global is the global limit: this database's and, under --limits, the
// shared setting.
type Global struct {
	Database GlobalSetting
	Tokens   float64 // in this database's bucket now, when on
	// Shared is the setting every host shares; nil without --limits or
	// when it was never set for every host (each host keeps its own).
	Shared *GlobalSetting
}

// Global reads the global limit.
func (r *Record) Global(ctx context.Context) (Global, error) {
	l, tokens, on, err := readmodel.New(r.st).GlobalLimit(ctx)
	if err != nil {
		return Global{}, err
	}
	g := Global{Database: GlobalSetting{On: on, Limit: l}, Tokens: tokens}
	if r.sh != nil {
		c, err := r.sh.Config(ctx)
		if err != nil {
			return Global{}, err
		}
		g.Shared = c.Global
	}
	return g, nil
}

// GlobalBefore is the global limit's rate and burst a change starts from:
// the shared setting under --limits when it is on, else this database's.
func (r *Record) GlobalBefore(ctx context.Context) (ratelimit.Limit, error) {
	if r.sh != nil {
		c, err := r.sh.Config(ctx)
		if err != nil {
			return ratelimit.Limit{}, err
		}
		if c.Global != nil && c.Global.On {
			return c.Global.Limit, nil
		}
	}
	l, _, _, err := readmodel.New(r.st).GlobalLimit(ctx)
	return l, err
}

// SetGlobal sets the global limit on the record, and in this database; a
// failure in this database is a *DatabaseError.
func (r *Record) SetGlobal(ctx context.Context, g GlobalSetting) error {
	if r.sh != nil {
		if err := r.sh.SetGlobal(ctx, g.On, g.Limit); err != nil {
			return fmt.Errorf("%w (nothing changed in this database)", err)
		}
	}
	if err := r.st.SetGlobalLimit(ctx, g.On, g.Limit); err != nil {
		return &DatabaseError{err}
	}
	return nil
}
