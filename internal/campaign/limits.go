package campaign

import (
	"strconv"
	"time"
)

// Waits of a host whose limits are shared through Redis (--limits) and
// cannot be asked: nothing is claimed (fail closed) until they answer. They
// are the host's connection, not the campaign's fault: the campaign is not
// paused, and sending resumes by itself.
const (
	// WaitLimits: the shared limits (Redis) do not answer.
	WaitLimits WaitReason = "limits"
	// WaitLimitsLost: the shared limits hold no state (a Redis restarted
	// without persistence): nothing is admitted until `wasend quota reset
	// --force` rebuilds the day from each host's own count.
	WaitLimitsLost WaitReason = "limits-lost"
)

// LimitsPoll is how often a host waiting for the shared limits asks again.
const LimitsPoll = time.Second

// LimitsWait is what a campaign's host last noted while it waited for the
// shared limits; a zero Since when it is not waiting.
type LimitsWait struct {
	Since  time.Time
	Seen   time.Time  // the last claim that found the shared limits so
	Reason WaitReason // WaitLimits or WaitLimitsLost
	Error  string     // the last error, without secrets (the URL is redacted)
}

// SharedClaim is a claim's admission by the shared limits: what a refund
// gives back, exactly once, when the API proved the message was not
// accepted.
type SharedClaim struct {
	Portfolio string // the gate's portfolio
	ID        string // unique across hosts: the host's id, the row's id and its attempt
	Account   string
	Day       string // the quota day that counted it
}

// SharedClaimID names a row's attempt among every host's (host is the
// database's id among them): the same row and attempt asked again (a
// retried transaction, a claim rolled back after its admission) is a
// replay that spends nothing twice, and a refund queued for it, by the
// record path or by the lapse of its lease, names the same charge.
func SharedClaimID(host string, messageID int64, attempt int) string {
	return host + ":" + strconv.FormatInt(messageID, 10) + ":" + strconv.Itoa(attempt)
}

// Why a recipient did not get their sticky number, beyond the local
// claim's reasons, when limits are shared between hosts.
const (
	// StickyCooling: the number rests after a throttle on this host, and
	// the shared limits do not wait for a host's cooldowns.
	StickyCooling = "cooling down"
	// StickyElsewhere: the number is not one of this host's accounts
	// (another host sends from it, in the same portfolio).
	StickyElsewhere = "not on this host"
)
