package hostshare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/ratelimit"
)

// reactionKey holds a number's throttle reaction (ratelimit.Reaction as
// JSON) that every host sending from it feeds: one per number, whichever
// portfolio counts it, as the number's bucket is one. The number's hash
// tag puts it beside the number's home key on a Redis Cluster.
func reactionKey(number string) string { return "wasend:{n:" + number + "}:reaction" }

// reactionTTL forgets a reaction nobody fed for this long: by then its
// factor has climbed back to the full rate (ratelimit.Health.FactorAt),
// and what its windows held is stale.
const reactionTTL = time.Hour

// reactionTries bounds the attempts of one feed against other hosts
// feeding the same number at the same instant: each retry reads what the
// others wrote, and one of them wins each round, so this many hosts may
// feed one number at once.
const reactionTries = 32

// FeedReaction passes this host's answers from the number (its
// phone-number id) to the reaction every host sending from it shares
// (ratelimit.Reaction.Feed), and returns the factor the reaction last
// decided and when (the zero time: never). The reaction is read, fed and
// written back in one optimistic transaction (WATCH): the decision is the
// Go reaction's, and a host whose write met another's feeds again from
// what that one wrote.
func (s *Shared) FeedReaction(ctx context.Context, number string, answers []ratelimit.Answered) (factor float64, since time.Time, err error) {
	if len(answers) == 0 {
		return 0, time.Time{}, errors.New("feed the throttle reaction: no answers")
	}
	key := reactionKey(number)
	feed := func(tx *redis.Tx) error {
		r := ratelimit.NewReaction(1, answers[0].At)
		b, err := tx.Get(ctx, key).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		default:
			if err := r.UnmarshalJSON(b); err != nil {
				// Not ours to keep (a version that wrote another
				// shape): start again rather than stop sending.
				r = ratelimit.NewReaction(1, answers[0].At)
			}
		}
		r.Feed(answers)
		out, err := r.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, out, reactionTTL)
			return nil
		}); err != nil {
			return err
		}
		factor, since = r.Decided()
		return nil
	}
	for range reactionTries {
		err = s.rdb.Watch(ctx, feed, key)
		if !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	if err != nil {
		return 0, time.Time{}, redisgate.Unreachable(fmt.Sprintf("feed number %s's throttle reaction", number), err)
	}
	return factor, since, nil
}

// FeedReaction is Shared.FeedReaction: the engine finds it on the sync
// it runs beside (dispatch.SharedReactions).
func (s *Sync) FeedReaction(ctx context.Context, number string, answers []ratelimit.Answered) (float64, time.Time, error) {
	return s.shared.FeedReaction(ctx, number, answers)
}
