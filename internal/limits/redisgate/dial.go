package redisgate

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// dial connects to the Redis at rawURL (redis://[user:pass@]host:port/db,
// rediss:// for TLS) and checks that it answers. The URL's password never
// appears in an error.
func dial(ctx context.Context, rawURL string) (*redis.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("limits URL: not a valid URL (want redis://[user:pass@]host:6379/0; not shown, it may hold a password)")
	}
	shown := u.Redacted()
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("limits URL %s: scheme %q, want redis:// or rediss://", shown, u.Scheme)
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("limits URL %s: %w", shown, err)
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
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("limits at %s: %w: %w", shown, ErrUnavailable, err)
	}
	return rdb, nil
}
