package redisgate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits"
)

// options reads a limits URL (redis://[user:pass@]host:port/db, rediss://
// for TLS) into client options with wasend's timeouts, and the URL as it
// may be shown (its password redacted).
func options(rawURL string) (*redis.Options, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", errors.New("limits URL: not a valid URL (want redis://[user:pass@]host:6379/0; not shown, it may hold a password)")
	}
	shown := u.Redacted()
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, shown, fmt.Errorf("limits URL %s: scheme %q, want redis:// or rediss://", shown, u.Scheme)
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, shown, fmt.Errorf("limits URL %s: %w", shown, err)
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = defaultDialTimeout
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = defaultIOTimeout
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = defaultIOTimeout
	}
	if opts.DialerRetries == 0 {
		// One dial per try: a Redis that is down is reported (and sending
		// waits) within seconds, not after go-redis's five dials per retry.
		opts.DialerRetries = 1
	}
	return opts, shown, nil
}

// Pool is one connection to the Redis at a limits URL and the gates of
// the portfolios asked for on it: what a host's claims ask (driver.Gates).
// Dial does not connect: a Redis that is down at start is waited for like
// one that goes down later.
type Pool struct {
	rdb   *redis.Client
	shown string

	mu     sync.Mutex
	gates  map[string]*Gate
	pinned func() time.Time // see PinClock
}

// Dial reads rawURL and prepares its client; nothing is connected yet.
func Dial(rawURL string) (*Pool, error) {
	opts, shown, err := options(rawURL)
	if err != nil {
		return nil, err
	}
	return &Pool{rdb: redis.NewClient(opts), shown: shown, gates: map[string]*Gate{}}, nil
}

// Gate returns the gate of portfolio, the same one each time.
func (p *Pool) Gate(portfolio string) (limits.Gate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if g, ok := p.gates[portfolio]; ok {
		return g, nil
	}
	g, err := New(p.rdb, portfolio)
	if err != nil {
		return nil, err
	}
	g.pinned = p.pinned
	p.gates[portfolio] = g
	return g, nil
}

// PinClock makes every gate of the pool, opened before or after, read now
// instead of Redis TIME. Only tests call it: the store's conformance
// tables run the same steps at the same instants against the local limits
// and Redis, which Redis's own clock cannot give. Claims still expire on
// Redis's clock.
func (p *Pool) PinClock(now func() time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pinned = now
	for _, g := range p.gates {
		g.pinned = now
	}
}

// Ping checks that Redis answers.
func (p *Pool) Ping(ctx context.Context) error {
	if err := p.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("limits at %s: %w: %w", p.shown, ErrUnavailable, err)
	}
	return nil
}

// Time is Redis's clock (TIME): the clock of every admission, which each
// host's own clock should agree with.
func (p *Pool) Time(ctx context.Context) (time.Time, error) {
	t, err := p.rdb.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("limits at %s: %w: %w", p.shown, ErrUnavailable, err)
	}
	return t, nil
}

// String is the URL with its password redacted.
func (p *Pool) String() string { return p.shown }

// Close closes the connection of every gate of the pool.
func (p *Pool) Close() error { return p.rdb.Close() }

// Unavailable reports whether err means Redis could not be reached or did
// not answer (fail closed: wait and ask again).
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }
