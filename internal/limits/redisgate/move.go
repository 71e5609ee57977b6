package redisgate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasend/wasend/internal/limits"
)

// A number's daily cap is counted in the portfolio it sends from. Moved to
// another portfolio (or into a new one) it takes its quota day and count
// along: each number has a home key, wasend:{n:NUMBER}:home, naming the
// portfolio that counts it. A gate that meets a number whose home is
// another portfolio hands it over (move.lua there, take.lua here: each
// script touches one portfolio's slot, so a Redis Cluster still works)
// before it admits or resets anything for it. The portfolio it left fills
// its count of that day, so a host still sending it from there is refused
// for the rest of the day instead of spending a second cap.

var (
	//go:embed move.lua
	moveLua string
	//go:embed take.lua
	takeLua string

	moveScript = redis.NewScript(moveLua)
	takeScript = redis.NewScript(takeLua)
)

// movedFull is the count a portfolio's number is filled to when it leaves
// for another: above any daily cap.
const movedFull = 1 << 30

// usedTTL is how long a carried count is kept when it has no expiry yet.
const usedTTL = 3 * 24 * time.Hour

func (g *Gate) homeKey(account string) string {
	return "wasend:" + g.homes + "{n:" + account + "}:home"
}

func portfolioPrefix(p string) string { return "wasend:{p:" + p + "}:" }

// adopt makes this gate's portfolio the home of account, handing its quota
// day over from its former portfolio first. It asks once per account and
// gate: a number moves between portfolios by an operator's command, which
// the next run's gates see. Forced (quota reset --force), a number whose
// former portfolio lost its state is adopted without its count: the
// operator starts its day again.
func (g *Gate) adopt(ctx context.Context, account string, force bool) error {
	g.mu.Lock()
	done := g.homed[account]
	g.mu.Unlock()
	if done {
		return nil
	}
	prev, err := g.rdb.Get(ctx, g.homeKey(account)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Unreachable("the home portfolio of "+account, err)
	}
	if prev != "" && prev != g.portfolio {
		old := portfolioPrefix(prev)
		res, err := moveScript.Run(ctx, g.rdb, []string{old + "gen", old + "day:" + account, old + "moved:" + account},
			old+"used:"+account+":", movedFull, int64(usedTTL/time.Second)).Slice()
		if err != nil {
			return Unreachable("move "+account+" from portfolio "+prev, err)
		}
		s := strs(res)
		switch {
		case len(s) == 1 && s[0] == "LOST" && force:
		case len(s) == 1 && s[0] == "LOST":
			return fmt.Errorf("number %s moved here from portfolio %s, whose shared state is lost, so its count today is unknown: %w",
				account, prev, limits.ErrStateLost)
		case len(s) == 1 && s[0] == "NONE":
		case len(s) == 3 && s[0] == "MOVED":
			if _, err := strconv.Atoi(s[2]); err != nil {
				return fmt.Errorf("move %s from portfolio %s: unexpected answer from the script: %v", account, prev, res)
			}
			res, err := takeScript.Run(ctx, g.rdb, []string{g.genKey(), g.dayKey(account)},
				g.prefix+"used:"+account+":", s[1], s[2], int64(usedTTL/time.Second)).Slice()
			if err != nil {
				return Unreachable("move "+account+" to portfolio "+g.portfolio, err)
			}
			t := strs(res)
			switch {
			case len(t) == 1 && t[0] == "LOST":
				return fmt.Errorf("move %s to portfolio %s: %w", account, g.portfolio, limits.ErrStateLost)
			case len(t) != 2 || t[0] != "OK":
				return fmt.Errorf("move %s to portfolio %s: unexpected answer from the script: %v", account, g.portfolio, res)
			}
		default:
			return fmt.Errorf("move %s from portfolio %s: unexpected answer from the script: %v", account, prev, res)
		}
	}
	if prev != g.portfolio {
		if err := g.rdb.Set(ctx, g.homeKey(account), g.portfolio, 0).Err(); err != nil {
			return Unreachable("the home portfolio of "+account, err)
		}
	}
	g.mu.Lock()
	g.homed[account] = true
	g.mu.Unlock()
	return nil
}
