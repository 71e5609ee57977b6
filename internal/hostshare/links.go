package hostshare

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/store/driver"
)

// The phone ↔ user id links travel with the suppression list. A
// suppression applies to a person, whichever of their number or user id a
// row names, only where the host knows the link (the claim follows the
// links it has); and under --limits webhooks reach one host, the one
// behind the callback URL, which alone learns them. So each sender pushes
// the links its database learned to Redis and copies the others' into its
// own (Sync), as it does the list itself:
//
//	wasend:{shared}:links      hash user id -> phone
//	wasend:{shared}:links:log  sorted set user id -> version of its last change
//	wasend:{shared}:links:ver  the version counter of the links
//
// under the list's epoch: a Redis that lost its data gets every host's
// links again.

var (
	linksKeys = []string{sharedPrefix + "links", sharedPrefix + "links:log", sharedPrefix + "links:ver", suppEpochKey}

	//go:embed links_push.lua
	linksPushLua string
	//go:embed links_changes.lua
	linksChangesLua string

	linksPushScript    = redis.NewScript(linksPushLua)
	linksChangesScript = redis.NewScript(linksChangesLua)
)

// PushLinks puts links on the shared list, each replacing the user id's
// link there only when learned later, and returns how many changed.
func (s *Shared) PushLinks(ctx context.Context, links []readmodel.LearnedLink) (changed int, err error) {
	for chunk := range slices.Chunk(links, suppressBatch) {
		args := []any{newEpoch()}
		for _, l := range chunk {
			args = append(args, l.UserID, l.Phone, l.SeenAt.UnixNano())
		}
		n, err := linksPushScript.Run(ctx, s.rdb, linksKeys, args...).Int()
		if err != nil {
			return changed, redisgate.Unreachable("push to the shared links", err)
		}
		changed += n
	}
	return changed, nil
}

// LinkChanges returns up to limit links changed after version since,
// oldest first, the version of the last, and the list's epoch.
func (s *Shared) LinkChanges(ctx context.Context, since int64, limit int) (epoch string, links []readmodel.LearnedLink, last int64, err error) {
	res, err := linksChangesScript.Run(ctx, s.rdb, linksKeys, since, limit).Slice()
	if err != nil {
		return "", nil, 0, redisgate.Unreachable("read changes of the shared links", err)
	}
	if len(res) == 0 || (len(res)-1)%3 != 0 {
		return "", nil, 0, fmt.Errorf("read changes of the shared links: unexpected answer of %d values", len(res))
	}
	epoch, _ = res[0].(string)
	last = since
	for i := 1; i < len(res); i += 3 {
		user, _ := res[i].(string)
		verStr, _ := res[i+1].(string)
		if last, err = strconv.ParseInt(verStr, 10, 64); err != nil {
			return "", nil, 0, fmt.Errorf("shared links: version %q of %s: %w", verStr, user, err)
		}
		v, _ := res[i+2].(string)
		phone, seen, ok := strings.Cut(v, "\t")
		ns, err := strconv.ParseInt(seen, 10, 64)
		if !ok || err != nil {
			return "", nil, 0, fmt.Errorf("shared links: entry of %s is not PHONE<tab>SEEN: %q", user, v)
		}
		links = append(links, readmodel.LearnedLink{IdentityLink: campaign.IdentityLink{UserID: user, Phone: phone}, SeenAt: time.Unix(0, ns)})
	}
	return epoch, links, last, nil
}

// linkMarks are how far a Sync has pushed this database's links (by when
// each was learned) and copied the shared ones (by version), under which
// epoch. Kept in memory: a new process pushes and copies them all again,
// which changes nothing where they agree.
type linkMarks struct {
	epoch   string
	version int64
	pushed  readmodel.LinkMark
}

// syncLinks pushes the links this database learned since the last push,
// then copies the shared links changed since the last pull into it.
func (s *Sync) syncLinks(ctx context.Context) error {
	rd := readmodel.New(s.st)
	for {
		list, next, err := rd.LinksLearnedAfter(ctx, s.links.pushed, page)
		if err != nil {
			return err
		}
		if len(list) > 0 {
			if _, err := s.shared.PushLinks(ctx, list); err != nil {
				return err
			}
			s.links.pushed = next
		}
		if len(list) < page {
			break
		}
	}
	// The next poll reads the last instant again: a link changed later at
	// the same instant (a clock that did not move) still goes up. A pair
	// pushed again changes nothing.
	s.links.pushed.UserID = ""
	for {
		since := s.links.version
		epoch, links, last, err := s.shared.LinkChanges(ctx, since, page)
		if err != nil {
			return err
		}
		if epoch != s.links.epoch {
			// Another Redis (or one that lost its data): its versions
			// start again, so read it all, and put this host's links up
			// again at the next poll.
			if s.links.epoch != "" {
				s.links.pushed = readmodel.LinkMark{}
			}
			s.links.epoch, s.links.version = epoch, 0
			if since != 0 {
				continue
			}
		}
		if len(links) > 0 {
			// Each as learned where it was: a copy is never newer than its
			// origin, nor pushed back over a later change.
			if err := s.st.WithInbox(ctx, func(tx driver.InboxTx, _ time.Time) error {
				for _, l := range links {
					if err := tx.LearnLinks(ctx, []campaign.IdentityLink{l.IdentityLink}, l.SeenAt); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
			s.links.version = last
		}
		if len(links) < page {
			return nil
		}
	}
}
