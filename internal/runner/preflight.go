package runner

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/whatsapp"
)

// PhoneReader reads a business number with its token; *whatsapp.Client
// is one.
type PhoneReader interface {
	PhoneNumber(ctx context.Context, phoneNumberID, token string) (whatsapp.PhoneNumber, error)
}

// Verdict is what the preflight made of one account.
type Verdict string

const (
	// VerdictOK: the API answered with the number, for this token.
	VerdictOK Verdict = "ok"
	// VerdictThrottled: the API answered but is rate limiting the check;
	// the account stays in (the send path handles throttling).
	VerdictThrottled Verdict = "throttled"
	// VerdictFailed: the API refused the token or does not know the number
	// for it; the account is left out, as an account-fatal error would
	// drop it during a run.
	VerdictFailed Verdict = "failed"
	// VerdictUnreached: no Graph answer (connection error, a 5xx, or
	// something that is not the Graph API).
	VerdictUnreached Verdict = "unreachable"
)

// AccountCheck is the preflight's word on one account.
type AccountCheck struct {
	Account campaign.Account
	Verdict Verdict
	Number  whatsapp.PhoneNumber // VerdictOK
	Err     error                // otherwise
	Code    int                  // the Graph error code, when there was one
	// NotGraph: what answered was not the Graph API (no Graph error
	// body). When it is so for every account, the base URL is wrong.
	NotGraph bool
}

// Usable reports whether the account may send in this run.
func (c AccountCheck) Usable() bool { return c.Verdict == VerdictOK || c.Verdict == VerdictThrottled }

// ErrPreflight is wrapped by every error that stops a run before it starts.
var ErrPreflight = errors.New("preflight check failed")

// noAccountError: no account passed the preflight. It is an ErrPreflight
// and, for the exit code, a campaign.ErrNoUsableAccount.
type noAccountError string

func (e noAccountError) Error() string   { return string(e) }
func (e noAccountError) Unwrap() []error { return []error{ErrPreflight, campaign.ErrNoUsableAccount} }

// PreflightReason marks, in a campaign's dropped accounts, those the
// preflight left out: a later run whose check passes takes them back.
const PreflightReason = "preflight: "

// CheckBaseURL says what is wrong with an API base URL, or nil.
func CheckBaseURL(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("%w: API base URL %q is not a URL: %w", ErrPreflight, base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: API base URL %q is not a URL: want http:// or https:// and a host (set WASEND_API_BASE, or leave it unset for %s)",
			ErrPreflight, base, whatsapp.DefaultBaseURL)
	}
	return nil
}

// CheckAccounts makes one cheap call per account (GET /{version}/{phone
// number id}) to prove that the base URL is the Graph API, that the token
// is valid and that the number exists for it. It returns every account's
// verdict; the error (wrapping ErrPreflight) says when nothing can be sent:
// the URL is not one, no account reached the API, or none passed.
func CheckAccounts(ctx context.Context, api PhoneReader, base string, accts []campaign.Account, token func(env string) (string, error)) ([]AccountCheck, error) {
	if base == "" {
		base = whatsapp.DefaultBaseURL
	}
	if err := CheckBaseURL(base); err != nil {
		return nil, err
	}
	if len(accts) == 0 {
		return nil, fmt.Errorf("%w: no enabled account", ErrPreflight)
	}
	out := make([]AccountCheck, len(accts))
	for i, a := range accts {
		out[i] = checkAccount(ctx, api, a, token)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	var reached, usable int
	var why []string
	for _, c := range out {
		if c.Verdict != VerdictUnreached && !c.NotGraph {
			reached++
		}
		if c.Usable() {
			usable++
		} else {
			why = append(why, fmt.Sprintf("account %s: %v", c.Account.Name, c.Err))
		}
	}
	switch {
	case reached == 0:
		return out, fmt.Errorf("%w: cannot reach the Cloud API at %s: %v; check WASEND_API_BASE and the network", ErrPreflight, base, out[0].Err)
	case usable == 0:
		return out, noAccountError("preflight check failed: no account passed the check: " + strings.Join(why, "; "))
	}
	return out, nil
}

func checkAccount(ctx context.Context, api PhoneReader, a campaign.Account, token func(string) (string, error)) AccountCheck {
	c := AccountCheck{Account: a}
	tok, err := token(a.TokenEnv)
	if err != nil {
		c.Verdict, c.Err = VerdictFailed, err
		return c
	}
	c.Number, err = api.PhoneNumber(ctx, a.PhoneNumberID, tok)
	var apiErr *whatsapp.APIError
	switch {
	case err == nil:
		c.Verdict = VerdictOK
		if _, lerr := NumberInfo(c.Number, time.Time{}); lerr != nil {
			c.Verdict, c.Err = VerdictFailed, lerr
		}
	case errors.As(err, &apiErr) && !apiErr.NoBody && apiErr.HTTPStatus < 500:
		c.Code, c.Err = apiErr.Code, err
		c.Verdict = VerdictFailed
		if whatsapp.ClassifyCode(apiErr.Code) == whatsapp.ClassThrottled {
			c.Verdict = VerdictThrottled
		}
	case errors.As(err, &apiErr) && apiErr.NoBody:
		// As a send would take it (whatsapp.Classify): a 404 is this
		// account's configuration and leaves it out; a 429 stays in; the
		// rest (5xx, a gateway's answer) may be an outage.
		c.NotGraph, c.Err = true, err
		switch whatsapp.Classify(err) {
		case whatsapp.ClassAccountFatal:
			c.Verdict = VerdictFailed
		case whatsapp.ClassThrottled:
			c.Verdict = VerdictThrottled
		default:
			c.Verdict, c.Err = VerdictUnreached, fmt.Errorf("%w (is the base URL the Graph API?)", err)
		}
	default:
		// The URL is in the message already; the reason is what matters.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s: %w", strings.ToUpper(ue.Op), ue.Err)
		}
		c.Verdict, c.Err = VerdictUnreached, err
	}
	return c
}

// Dropper records the preflight's verdicts on a campaign; driver.Driver is
// one.
type Dropper interface {
	DropAccount(ctx context.Context, campaignID, accountID int64, reason string, code int, now time.Time) error
	ReadmitAccount(ctx context.Context, campaignID, accountID int64, prefix string) (bool, error)
}

// ApplyChecks leaves the accounts that failed out of the campaign, exactly
// as an account-fatal answer during a run would (shown in `status`, taken
// back by `campaign resume`), and takes back those a former preflight left
// out and that pass now. It returns the names taken back.
func ApplyChecks(ctx context.Context, st Dropper, campaignID int64, checks []AccountCheck, now time.Time) ([]string, error) {
	var back []string
	for _, c := range checks {
		switch {
		case c.Verdict == VerdictFailed:
			if err := st.DropAccount(ctx, campaignID, c.Account.ID, PreflightReason+c.Err.Error(), c.Code, now); err != nil {
				return back, err
			}
		case c.Verdict == VerdictOK:
			ok, err := st.ReadmitAccount(ctx, campaignID, c.Account.ID, PreflightReason)
			if err != nil {
				return back, err
			}
			if ok {
				back = append(back, c.Account.Name)
			}
		}
	}
	return back, nil
}

// CheckRecorder keeps an account check's finding; driver.Driver is one.
type CheckRecorder interface {
	RecordCheck(ctx context.Context, accountID int64, f campaign.CheckFinding) error
}

// RecordChecks keeps each verdict on its account, so that status and the
// account list say that an account failed its check and why until a check
// passes: a failed one's error (the API's word or the token variable's
// name, never a token), an ok one clears it. A throttled or unreached
// check proves nothing either way and changes nothing.
func RecordChecks(ctx context.Context, st CheckRecorder, checks []AccountCheck, now time.Time) error {
	for _, c := range checks {
		var f campaign.CheckFinding
		switch c.Verdict {
		case VerdictFailed:
			f = campaign.CheckFinding{Code: c.Code, Error: c.Err.Error(), At: now}
		case VerdictOK:
		default:
			continue
		}
		if err := st.RecordCheck(ctx, c.Account.ID, f); err != nil {
			return err
		}
	}
	return nil
}

// CheckEnabled fails early when nothing could be sent: no enabled account.
// An account whose token variable is empty is the preflight's: it is left
// out of the run, as an account whose token is refused.
func CheckEnabled(ctx context.Context, st driver.Driver) error {
	accts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	for _, a := range accts {
		if !a.Disabled {
			return nil
		}
	}
	return errors.New("no enabled account: add one with wasend account add (a name, --phone-number-id, --tier and --token-env), or enable one with wasend account set and --enable")
}

// preflight checks the API base URL and every enabled account with one
// call each before anything is claimed, keeps what it read of the numbers,
// and warns loudly about the accounts this run leaves out. Its error says
// that nothing was sent.
func preflight(ctx context.Context, o Options, api PhoneReader, baseURL string, token func(string) (string, error)) ([]AccountCheck, error) {
	accts, err := o.Store.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	var enabled []campaign.Account
	for _, a := range accts {
		if !a.Disabled {
			enabled = append(enabled, a.Account)
		}
	}
	checks, err := CheckAccounts(ctx, api, baseURL, enabled, token)
	if rerr := RecordChecks(ctx, o.Store, checks, o.Now()); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	// The check read each number: keep its throughput, quality and the
	// portfolio's messaging limit for this run's claims.
	if err := RecordSyncs(ctx, o.Store, o.IO, checks, false, o.Flags, o.Now); err != nil {
		return nil, err
	}
	for _, c := range checks {
		switch c.Verdict {
		case VerdictFailed:
			o.IO.Warnf("account %s (phone number id %s) is LEFT OUT of this run: %v (check it with `wasend account test %s%s`)",
				c.Account.Name, c.Account.PhoneNumberID, c.Err, c.Account.Name, o.Flags)
		case VerdictUnreached:
			o.IO.Warnf("account %s could not be checked: %v; it stays in, and an outage is waited out", c.Account.Name, c.Err)
		}
	}
	return checks, nil
}

// outageProbe reads the number of the first account that passed the
// preflight: the cheap call that tells when an outage is over.
func outageProbe(api PhoneReader, checks []AccountCheck, token func(string) (string, error)) func(context.Context) error {
	for _, c := range checks {
		if !c.Usable() {
			continue
		}
		a := c.Account
		return func(ctx context.Context) error {
			tok, err := token(a.TokenEnv)
			if err != nil {
				return err
			}
			_, err = api.PhoneNumber(ctx, a.PhoneNumberID, tok)
			return err
		}
	}
	return nil
}
