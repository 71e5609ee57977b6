package hostshare

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/limits/redisgate"
	"github.com/wasend/wasend/internal/ratelimit"
)

// Shared is what every host shares beyond one portfolio's limits: the
// suppression list and the hot configuration (tier settings and the
// global limit). Hosts write it through the commands run with --limits,
// and senders push what their host listed by itself (Push); each sender
// copies it into its own database (Sync), where claims read it as they
// read local changes.
//
// Keys (all under the fixed hash tag {shared}):
//
//	wasend:{shared}:epoch      a random id written by the first change of a new (or emptied) Redis
//	wasend:{shared}:supp       hash phone -> "CREATED_NS<tab>REASON": the suppression list
//	wasend:{shared}:supp:log   sorted set phone -> version of the number's last change (added, reason changed, removed)
//	wasend:{shared}:supp:ver   the version counter of the list (one version per changed number)
//	wasend:{shared}:config     hash: "ver" (counts changes), "tier:NAME" -> "RATE BURST CAP", "global" -> "RATE BURST" or "off"
//
// The suppression list is global, not per portfolio: a person who asked to
// stop is asked by all numbers. Its scripts touch several keys, which Redis
// Cluster allows only within one slot, hence the one fixed hash tag: on a
// cluster all of it lives on one node. It is small and read once a poll
// per host (only the changes since the last read), so one node carries it
// easily; the portfolios' admissions spread over the others.
//
// The log keeps one entry per number ever listed, including removed ones:
// that is how a host that was away learns of a removal.
type Shared struct {
	rdb redis.UniversalClient
}

const sharedPrefix = "wasend:{shared}:"

var (
	suppEpochKey = sharedPrefix + "epoch"
	suppListKey  = sharedPrefix + "supp"
	suppLogKey   = sharedPrefix + "supp:log"
	suppVerKey   = sharedPrefix + "supp:ver"
	configKey    = sharedPrefix + "config"

	suppKeys = []string{suppListKey, suppLogKey, suppVerKey, suppEpochKey}
)

var (
	//go:embed suppress_add.lua
	suppressAddLua string
	//go:embed suppress_remove.lua
	suppressRemoveLua string
	//go:embed suppress_changes.lua
	suppressChangesLua string
	//go:embed suppress_push.lua
	suppressPushLua string

	suppressAddScript     = redis.NewScript(suppressAddLua)
	suppressRemoveScript  = redis.NewScript(suppressRemoveLua)
	suppressChangesScript = redis.NewScript(suppressChangesLua)
	suppressPushScript    = redis.NewScript(suppressPushLua)
)

// OpenShared connects to the Redis at rawURL (as the limits gate does) for
// the shared suppression list and configuration.
func OpenShared(ctx context.Context, rawURL string) (*Shared, error) {
	rdb, err := redisgate.Connect(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return NewShared(rdb), nil
}

// NewShared uses a connected client (a plain or a cluster client). Close
// closes it.
func NewShared(rdb redis.UniversalClient) *Shared { return &Shared{rdb: rdb} }

// Close closes the Redis client.
func (s *Shared) Close() error { return s.rdb.Close() }

// Suppression is a number on the shared list.
type Suppression struct {
	Phone     string // E.164 with '+'
	Reason    string
	CreatedAt time.Time // when it was first listed (the lister's clock)
}

// SuppressionChange is one number's latest change: listed (with its entry)
// or, when Removed, taken off the list.
type SuppressionChange struct {
	Suppression
	Removed bool
	Version int64
}

// suppressBatch bounds the numbers one script call changes: a script holds
// Redis (and every host's admissions) while it runs, so a big import goes
// in steps of a few milliseconds each.
const suppressBatch = 2000

// Suppress lists numbers (E.164; the caller normalises them) and returns
// how many were not listed before. A number already listed keeps the time
// it was first listed; its reason changes only when a non-empty one is
// given. A list longer than suppressBatch goes in several steps: if one
// fails, the earlier ones stay listed and running the same command again
// completes it.
func (s *Shared) Suppress(ctx context.Context, list []Suppression, now time.Time) (added int, err error) {
	for chunk := range slices.Chunk(list, suppressBatch) {
		args := []any{newEpoch(), now.UnixNano()}
		for _, sp := range chunk {
			if err := campaign.CheckListable(sp.Phone); err != nil {
				return added, err
			}
			args = append(args, sp.Phone, sp.Reason)
		}
		n, err := suppressAddScript.Run(ctx, s.rdb, suppKeys, args...).Int()
		if err != nil {
			return added, redisgate.Unreachable("suppress on the shared list", err)
		}
		added += n
	}
	return added, nil
}

// Pushed is a number one host suppressed by itself (an opt-out the API
// reported, a number listed without --limits), to go on the shared list.
type Pushed struct {
	Suppression
	// IfUnknown lists it only if the list has never known the number:
	// neither lists it nor recorded its removal.
	IfUnknown bool
}

// Push lists what hosts suppressed by themselves and returns how many were
// not listed before. A number already listed keeps its entry, so pushing
// the same numbers again changes nothing. A number not in E.164 is left
// out. Long lists go in steps of suppressBatch, as Suppress's.
func (s *Shared) Push(ctx context.Context, list []Pushed) (added int, err error) {
	for chunk := range slices.Chunk(list, suppressBatch) {
		args := []any{newEpoch()}
		for _, p := range chunk {
			if campaign.CheckListable(p.Phone) != nil {
				continue // could never match a recipient; not worth blocking the rest
			}
			ifUnknown := "0"
			if p.IfUnknown {
				ifUnknown = "1"
			}
			args = append(args, p.Phone, p.CreatedAt.UnixNano(), p.Reason, ifUnknown)
		}
		n, err := suppressPushScript.Run(ctx, s.rdb, suppKeys, args...).Int()
		if err != nil {
			return added, redisgate.Unreachable("push to the shared suppression list", err)
		}
		added += n
	}
	return added, nil
}

// Unsuppress takes numbers off the list and returns how many were on it.
// Every number given is recorded as removed, listed or not, so a host that
// has it from elsewhere removes it too.
func (s *Shared) Unsuppress(ctx context.Context, phones []string) (removed int, err error) {
	for chunk := range slices.Chunk(phones, suppressBatch) {
		args := []any{newEpoch()}
		for _, p := range chunk {
			if err := campaign.CheckListable(p); err != nil {
				return removed, err
			}
			args = append(args, p)
		}
		n, err := suppressRemoveScript.Run(ctx, s.rdb, suppKeys, args...).Int()
		if err != nil {
			return removed, redisgate.Unreachable("remove from the shared list", err)
		}
		removed += n
	}
	return removed, nil
}

// Suppressions returns the whole list, ordered by phone.
func (s *Shared) Suppressions(ctx context.Context) ([]Suppression, error) {
	var (
		out    []Suppression
		cursor uint64
	)
	for {
		kv, next, err := s.rdb.HScan(ctx, suppListKey, cursor, "", 1000).Result()
		if err != nil {
			return nil, redisgate.Unreachable("read the shared suppression list", err)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			sp, err := parseSuppression(kv[i], kv[i+1])
			if err != nil {
				return nil, err
			}
			out = append(out, sp)
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	// HSCAN may return an entry twice (when the hash is resized meanwhile).
	slices.SortFunc(out, func(a, b Suppression) int { return strings.Compare(a.Phone, b.Phone) })
	return slices.CompactFunc(out, func(a, b Suppression) bool { return a.Phone == b.Phone }), nil
}

// SuppressionChanges returns up to limit changes after version since,
// oldest first, and the list's epoch: when the epoch is not the one the
// caller saw before, Redis lost its data (or is another Redis) and the
// versions started again, so the caller reads again from version 0.
func (s *Shared) SuppressionChanges(ctx context.Context, since int64, limit int) (epoch string, changes []SuppressionChange, err error) {
	res, err := suppressChangesScript.Run(ctx, s.rdb, suppKeys, since, limit).Slice()
	if err != nil {
		return "", nil, redisgate.Unreachable("read changes of the shared suppression list", err)
	}
	if len(res) == 0 || (len(res)-1)%3 != 0 {
		return "", nil, fmt.Errorf("read changes of the shared suppression list: unexpected answer of %d values", len(res))
	}
	epoch, _ = res[0].(string)
	for i := 1; i < len(res); i += 3 {
		phone, _ := res[i].(string)
		verStr, _ := res[i+1].(string)
		ver, err := strconv.ParseInt(verStr, 10, 64)
		if err != nil {
			return "", nil, fmt.Errorf("shared suppression list: version %q of %s: %w", verStr, phone, err)
		}
		c := SuppressionChange{Version: ver, Suppression: Suppression{Phone: phone}}
		if v, ok := res[i+2].(string); ok {
			if c.Suppression, err = parseSuppression(phone, v); err != nil {
				return "", nil, err
			}
		} else {
			c.Removed = true
		}
		changes = append(changes, c)
	}
	return epoch, changes, nil
}

func parseSuppression(phone, v string) (Suppression, error) {
	ns, reason, ok := strings.Cut(v, "\t")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil {
		return Suppression{}, fmt.Errorf("shared suppression list: entry of %s is not CREATED<tab>REASON: %q", phone, v)
	}
	return Suppression{Phone: phone, Reason: reason, CreatedAt: time.Unix(0, n)}, nil
}

func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Config is the hot configuration shared by every host: the settings of
// the tiers set with --limits, and the global limit. A tier absent from
// Tiers, or a nil Global, was never set through Redis: each host keeps its
// own.
type Config struct {
	Version int64
	Tiers   map[string]campaign.Limits
	Global  *GlobalSetting
}

// GlobalSetting is the global bucket: off, or on with Limit.
type GlobalSetting struct {
	On    bool
	Limit ratelimit.Limit
}

// SetTier stores a tier's settings for every host.
func (s *Shared) SetTier(ctx context.Context, name string, l campaign.Limits) error {
	if !campaign.ValidTier(name) {
		return fmt.Errorf("tier %q: must be one of new, warm, active", name)
	}
	if err := l.Validate(); err != nil {
		return fmt.Errorf("tier %s: %w", name, err)
	}
	v := fmtFloat(l.Rate) + " " + strconv.Itoa(l.Burst) + " " + strconv.Itoa(l.DailyCap)
	return s.setConfig(ctx, "tier:"+name, v)
}

// SetGlobal stores the global limit for every host: on with l, or off.
func (s *Shared) SetGlobal(ctx context.Context, on bool, l ratelimit.Limit) error {
	v := "off"
	if on {
		if err := (campaign.Limits{Rate: l.Rate, Burst: l.Burst}).Validate(); err != nil {
			return fmt.Errorf("global limit: %w", err)
		}
		v = fmtFloat(l.Rate) + " " + strconv.Itoa(l.Burst)
	}
	return s.setConfig(ctx, "global", v)
}

func (s *Shared) setConfig(ctx context.Context, field, value string) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, configKey, field, value)
		p.HIncrBy(ctx, configKey, "ver", 1)
		return nil
	})
	if err != nil {
		return redisgate.Unreachable("store the shared "+field, err)
	}
	return nil
}

// Config reads the shared configuration. A field that does not parse is
// an error naming it; the others are not applied either, so a host never
// runs on half of a change.
func (s *Shared) Config(ctx context.Context) (Config, error) {
	m, err := s.rdb.HGetAll(ctx, configKey).Result()
	if err != nil {
		return Config{}, redisgate.Unreachable("read the shared configuration", err)
	}
	c := Config{Tiers: map[string]campaign.Limits{}}
	bad := func(k, v string, err error) (Config, error) {
		return Config{}, fmt.Errorf("shared configuration %s (key %s): %q: %w", k, configKey, v, err)
	}
	for k, v := range m {
		switch {
		case k == "ver":
			if c.Version, err = strconv.ParseInt(v, 10, 64); err != nil {
				return bad(k, v, err)
			}
		case k == "global":
			g, err := parseGlobal(v)
			if err != nil {
				return bad(k, v, err)
			}
			c.Global = &g
		case strings.HasPrefix(k, "tier:"):
			name := strings.TrimPrefix(k, "tier:")
			if !campaign.ValidTier(name) {
				return bad(k, v, errors.New("no such tier"))
			}
			l, err := parseTier(v)
			if err != nil {
				return bad(k, v, err)
			}
			c.Tiers[name] = l
		}
	}
	return c, nil
}

func parseTier(v string) (campaign.Limits, error) {
	var l campaign.Limits
	f := strings.Fields(v)
	if len(f) != 3 {
		return l, errors.New("want RATE BURST CAP")
	}
	var err1, err2, err3 error
	l.Rate, err1 = strconv.ParseFloat(f[0], 64)
	l.Burst, err2 = strconv.Atoi(f[1])
	l.DailyCap, err3 = strconv.Atoi(f[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return l, err
	}
	return l, l.Validate()
}

func parseGlobal(v string) (GlobalSetting, error) {
	if v == "off" {
		return GlobalSetting{}, nil
	}
	f := strings.Fields(v)
	if len(f) != 2 {
		return GlobalSetting{}, errors.New(`want "off" or RATE BURST`)
	}
	rate, err1 := strconv.ParseFloat(f[0], 64)
	burst, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil {
		return GlobalSetting{}, err
	}
	g := GlobalSetting{On: true, Limit: ratelimit.Limit{Rate: rate, Burst: burst}}
	return g, (campaign.Limits{Rate: rate, Burst: burst}).Validate()
}

// ErrUnavailable is the limits gate's: Redis could not be reached or did
// not answer. Errors of the shared list and settings wrap it too.
var ErrUnavailable = redisgate.ErrUnavailable

// fmtFloat writes a rate so that it reads back as the same float64.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
