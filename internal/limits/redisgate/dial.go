package redisgate

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// dial connects to the Redis at rawURL (redis://[user:pass@]host:port/db,
// rediss:// for TLS; see options) and checks that it answers. The URL's
// password never appears in an error.
func dial(ctx context.Context, rawURL string) (*redis.Client, error) {
	opts, shown, err := options(rawURL)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("limits at %s: %w: %w", shown, ErrUnavailable, err)
	}
	return rdb, nil
}

// Connect is dial for the packages that keep their own keys on the same
// Redis (the shared suppression list and settings, package hostshare): one
// reading of a limits URL, one set of timeouts.
func Connect(ctx context.Context, rawURL string) (*redis.Client, error) { return dial(ctx, rawURL) }

// CheckURL reports what is wrong with rawURL as a limits URL (a wrong
// scheme, a URL that does not parse, a bad database number), without
// connecting: a caller tells a mistyped URL (usage) from a Redis that does
// not answer. The password never appears in the error.
func CheckURL(rawURL string) error {
	_, _, err := options(rawURL)
	return err
}
