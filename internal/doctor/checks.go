package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/hint"
	"github.com/wasend/wasend/internal/webhook"
	"github.com/wasend/wasend/internal/whatsapp"
)

// issues gathers what is wrong with one thing checked: the finding's
// level is the worst, its detail every reason, its fix the first command.
type issues struct {
	level  Level
	detail []string
	fix    string
}

func (is *issues) add(l Level, detail, fix string) {
	if is.level != Fail {
		is.level = l
	}
	is.detail = append(is.detail, detail)
	if is.fix == "" {
		is.fix = fix
	}
}

// finding is check's finding with summary and the issues found, if any.
func (is *issues) finding(check, summary string) Finding {
	f := Finding{Check: check, Level: OK, Summary: summary}
	if len(is.detail) > 0 {
		f.Level, f.Details, f.Fix = is.level, is.detail, is.fix
	}
	return f
}

// wasend is a wasend command line that runs when pasted: args quoted, the
// global flags the doctor was run with after them.
func (c Config) wasend(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = hint.Quote(a)
	}
	return "wasend " + strings.Join(q, " ") + c.Flags
}

func checkDatabase(ctx context.Context, c Config, add func(...Finding)) ([]campaign.AccountStatus, []campaign.Template) {
	if c.Database == nil {
		err := c.DatabaseErr
		if err == nil {
			err = errors.New("not opened")
		}
		add(Finding{Check: "database", Level: Fail, Summary: "cannot be opened", Details: []string{err.Error()}})
		return nil, nil
	}
	accts, err := c.Database.Accounts(ctx)
	if err != nil {
		add(Finding{Check: "database", Level: Fail, Summary: "cannot be read", Details: []string{err.Error()}})
		return nil, nil
	}
	templates, err := c.Database.Templates(ctx)
	if err != nil {
		add(Finding{Check: "database", Level: Fail, Summary: "cannot be read", Details: []string{err.Error()}})
		return nil, nil
	}
	var is issues
	zone := "not set"
	if c.Zone != nil {
		zone = c.Zone.String()
	}
	if c.ZoneErr != nil {
		is.add(Warn, fmt.Sprintf("%v: quota reset refuses to start a quota day under it; unset WASEND_TZ, or move quota days to it", c.ZoneErr),
			c.wasend("config", "set", "timezone", c.ZoneAsked))
	}
	add(is.finding("database", fmt.Sprintf("%s: writable, migrated, zone %s", c.DatabasePath, zone)))
	return accts, templates
}

// checkAccounts reads every enabled account's number with its token and
// returns what the API said of those that answered, by name.
func checkAccounts(ctx context.Context, c Config, accts []campaign.AccountStatus, add func(...Finding)) map[string]whatsapp.PhoneNumber {
	numbers := map[string]whatsapp.PhoneNumber{}
	enabled := 0
	for _, a := range accts {
		if a.Disabled {
			continue
		}
		enabled++
		add(checkAccount(ctx, c, a, numbers))
	}
	if enabled == 0 {
		add(Finding{Check: "accounts", Level: Fail, Summary: "no enabled account",
			Details: []string{"add a number with wasend account add, giving it its phone number id and token variable, or enable one with wasend account set and --enable"}})
	}
	return numbers
}

func checkAccount(ctx context.Context, c Config, a campaign.AccountStatus, numbers map[string]whatsapp.PhoneNumber) Finding {
	check := "account " + a.Name
	token, err := c.Token(a.TokenEnv)
	if err != nil {
		return Finding{Check: check, Level: Fail, Summary: fmt.Sprintf("token variable $%s is not set", a.TokenEnv),
			Details: []string{fmt.Sprintf("%v: set it to the access token of the number's business before wasend sends", err)}}
	}
	n, err := c.Graph.PhoneNumber(ctx, a.PhoneNumberID, token)
	if err != nil {
		return Finding{Check: check, Level: Fail, Summary: fmt.Sprintf("GET /%s failed", a.PhoneNumberID), Details: []string{graphDetail(err, a, c.BaseURL)}}
	}
	numbers[a.Name] = n
	var is issues
	// A number whose figures wasend cannot read is left out of every run.
	if _, err := c.NumberInfo(n); err != nil {
		is.add(Fail, err.Error()+": campaign run leaves the number out", "")
	}
	switch n.QualityRating {
	case "GREEN":
	case "YELLOW", "RED":
		is.add(Warn, fmt.Sprintf("quality %s: recipients block or report its messages; Meta may lower the portfolio's messaging limit", n.QualityRating), "")
	default:
		is.add(Warn, fmt.Sprintf("quality %q is not known to wasend", n.QualityRating), "")
	}
	if n.ThroughputPerSecond() == 0 {
		is.add(Warn, fmt.Sprintf("throughput level %q is not known to wasend: it paces the number at %d messages a second", n.Throughput.Level, campaign.DefaultThroughput), "")
	}
	if n.MessagingLimit == "" {
		is.add(Warn, "Meta gave no messaging limit (whatsapp_business_manager_messaging_limit)", "")
	}
	if a.WABA == "" {
		is.add(Warn, "no WABA id: its templates and webhook subscription cannot be checked; give it one with wasend account set and --waba-id", "")
	}
	limit := "limit " + strings.ToLower(strings.TrimPrefix(n.MessagingLimit, "TIER_"))
	if n.MessagingLimit == "" {
		limit = "no limit read"
	}
	return is.finding(check, fmt.Sprintf("%s: %s, %s, %s", n.DisplayPhoneNumber, n.QualityRating, throughputText(n), limit))
}

func throughputText(n whatsapp.PhoneNumber) string {
	if tp := n.ThroughputPerSecond(); tp > 0 {
		return fmt.Sprintf("%.0f/s", tp)
	}
	return "throughput " + n.Throughput.Level
}

// graphDetail says what a failed read of a's number means.
func graphDetail(err error, a campaign.AccountStatus, base string) string {
	var apiErr *whatsapp.APIError
	var te *whatsapp.TransportError
	switch {
	case errors.As(err, &apiErr) && apiErr.Code == 190:
		return fmt.Sprintf("%v: the token in $%s is invalid or expired; set a new one", err, a.TokenEnv)
	case errors.As(err, &apiErr) && apiErr.Code == 100:
		return fmt.Sprintf("%v: the phone number id %s is not known for the token in $%s", err, a.PhoneNumberID, a.TokenEnv)
	case errors.As(err, &apiErr) && (apiErr.Code == 10 || apiErr.Code == 200):
		return fmt.Sprintf("%v: the token in $%s may not read this number (whatsapp_business_management)", err, a.TokenEnv)
	case errors.As(err, &te):
		if base == "" {
			base = whatsapp.DefaultBaseURL
		}
		return fmt.Sprintf("%v: the API at %s did not answer (network, or WASEND_API_BASE)", err, base)
	}
	return err.Error()
}

// checkWABAs checks, for each WABA of the enabled accounts, that an app is
// subscribed to its webhooks and that its templates are synced and
// approved. The WABA is read with the token of its first account, by
// name, whose number answered.
func checkWABAs(ctx context.Context, c Config, accts []campaign.AccountStatus, numbers map[string]whatsapp.PhoneNumber,
	templates []campaign.Template, add func(...Finding)) {
	sorted := append([]campaign.AccountStatus(nil), accts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var wabas []string
	reader := map[string]campaign.AccountStatus{}
	for _, a := range sorted {
		if a.Disabled || a.WABA == "" {
			continue
		}
		if _, seen := reader[a.WABA]; !seen {
			wabas = append(wabas, a.WABA)
			reader[a.WABA] = a
		}
		if _, ok := numbers[a.Name]; ok {
			if _, ok := numbers[reader[a.WABA].Name]; !ok {
				reader[a.WABA] = a
			}
		}
	}
	statuses, statusErr := c.Database.MarketingStatuses(ctx)
	for _, waba := range wabas {
		a := reader[waba]
		if _, ok := numbers[a.Name]; ok {
			add(checkSubscribed(ctx, c, waba, a))
		}
		add(checkTemplates(c, waba, templates))
		add(checkMarketing(c, waba, templates, statuses, statusErr))
	}
}

// onboarded is the marketing_messages_onboarding_status of a WABA whose
// numbers may send through the Marketing Messages API.
const onboarded = "ONBOARDED"

// checkMarketing says whether the WABA's numbers may send its marketing
// templates through the Marketing Messages API, as template sync last
// read its onboarding: `--api marketing` sends there regardless, and Meta
// refuses a WABA not onboarded; `--api auto` keeps them on /messages. A
// WABA without an approved marketing template has nothing to send there:
// its status is said, not warned about.
func checkMarketing(c Config, waba string, templates []campaign.Template, statuses map[string]string, readErr error) Finding {
	check := "WABA marketing API"
	sync := c.wasend("template", "sync")
	marketing := 0
	for _, t := range templates {
		if t.WABA == waba && t.Status == "APPROVED" && strings.EqualFold(t.Category, campaign.CategoryMarketing) {
			marketing++
		}
	}
	if readErr != nil {
		return Finding{Check: check, Level: Warn, Summary: waba + ": onboarding not read", Details: []string{readErr.Error()}}
	}
	status, read := statuses[waba]
	switch {
	case status == onboarded:
		return Finding{Check: check, Level: OK, Summary: fmt.Sprintf("%s: onboarded, %s", waba, plural(marketing, "marketing template"))}
	case marketing == 0 && !read:
		return Finding{Check: check, Level: OK, Summary: waba + ": not read, no marketing template"}
	case marketing == 0:
		return Finding{Check: check, Level: OK, Summary: fmt.Sprintf("%s: %s, no marketing template", waba, statusText(status))}
	case !read:
		return Finding{Check: check, Level: Warn, Summary: waba + ": onboarding not read",
			Details: []string{fmt.Sprintf("%d approved marketing template(s), but template sync never read whether the WABA is onboarded to the Marketing Messages API: --api auto sends them through /messages until it does", marketing)},
			Fix:     sync}
	}
	return Finding{Check: check, Level: Warn, Summary: fmt.Sprintf("%s: %s", waba, statusText(status)),
		Details: []string{
			fmt.Sprintf("campaign run --api marketing sends its %d approved marketing template(s) to /marketing_messages, which Meta refuses from a WABA not onboarded; --api auto sends them through /messages", marketing),
			"accept the Marketing Messages API's terms for this WABA in Meta's Business Manager, then read its status again",
		},
		Fix: sync}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// statusText is a status not onboarded: "" is Graph leaving the field out.
func statusText(status string) string {
	if status == "" {
		return "not onboarded"
	}
	return "not onboarded (" + status + ")"
}

func checkSubscribed(ctx context.Context, c Config, waba string, a campaign.AccountStatus) Finding {
	check := "WABA webhooks"
	token, _ := c.Token(a.TokenEnv) // read before: the number answered with it
	apps, err := c.Graph.SubscribedApps(ctx, waba, token)
	if err != nil {
		return Finding{Check: check, Level: Warn, Summary: waba + ": subscribed apps not read",
			Details: []string{fmt.Sprintf("GET /%s/subscribed_apps with $%s (account %s): %v", waba, a.TokenEnv, a.Name, err)}}
	}
	if len(apps) == 0 {
		base := c.BaseURL
		if base == "" {
			base = whatsapp.DefaultBaseURL
		}
		return Finding{Check: check, Level: Fail, Summary: waba + ": no app subscribed",
			Details: []string{"no status or reply webhook of its numbers reaches any receiver: subscribe the app whose secret the receiver checks"},
			Fix: fmt.Sprintf(`curl -X POST -H "Authorization: Bearer $%s" %s`, a.TokenEnv,
				hint.Quote(base+"/"+c.version()+"/"+url.PathEscape(waba)+"/subscribed_apps"))}
	}
	names := make([]string, len(apps))
	for i, app := range apps {
		names[i] = app.Data.Name
		if names[i] == "" {
			names[i] = app.Data.ID
		}
	}
	return Finding{Check: check, Level: OK, Summary: waba + ": subscribed " + strings.Join(names, ", ")}
}

// templatesStale is the age of a WABA's synced templates after which the
// doctor says to sync them again: Meta pauses and edits templates at any
// time.
const templatesStale = 7 * 24 * time.Hour

func checkTemplates(c Config, waba string, templates []campaign.Template) Finding {
	check := "WABA templates"
	sync := c.wasend("template", "sync")
	var n, approved int
	var oldest time.Time
	for _, t := range templates {
		if t.WABA != waba {
			continue
		}
		n++
		if t.Status == "APPROVED" {
			approved++
		}
		if oldest.IsZero() || t.SyncedAt.Before(oldest) {
			oldest = t.SyncedAt
		}
	}
	if n == 0 {
		return Finding{Check: check, Level: Warn, Summary: waba + ": none synced",
			Details: []string{"campaigns cannot be checked against its templates before they send"}, Fix: sync}
	}
	age := c.Now().Sub(oldest)
	synced := "synced just now"
	if age >= time.Minute {
		synced = "synced " + ageText(age) + " ago"
	}
	summary := fmt.Sprintf("%s: %d/%d approved, %s", waba, approved, n, synced)
	var is issues
	if approved == 0 {
		is.add(Fail, "no approved template: every template message would fail", sync)
	}
	if age > templatesStale {
		is.add(Warn, fmt.Sprintf("synced more than %s ago: Meta may have paused or changed some since", ageText(templatesStale)), sync)
	}
	return is.finding(check, summary)
}

func ageText(d time.Duration) string {
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// checkQuotaDay compares each account's open quota day with today in the
// zone of quota days: an older one means the day's quota reset (cron's)
// did not run, and the account still counts yesterday's sends.
func checkQuotaDay(c Config, accts []campaign.AccountStatus) Finding {
	loc := c.Zone
	if loc == nil {
		loc = time.Local
	}
	today := c.Now().In(loc).Format(time.DateOnly)
	var late []string
	oldest := today
	for _, a := range accts {
		if a.QuotaDay != "" && a.QuotaDay < today {
			late = append(late, a.Name)
			oldest = min(oldest, a.QuotaDay)
		}
	}
	if len(late) > 0 {
		return Finding{Check: "quota day", Level: Warn,
			Summary: fmt.Sprintf("%s still open for %s", oldest, strings.Join(late, ", ")),
			Details: []string{fmt.Sprintf("today is %s in the zone of quota days (%s): the quota reset did not run at its midnight; check the crontab (CRON_TZ=%s, see `wasend quota reset --help`)",
				today, loc, loc)},
			Fix: c.wasend("quota", "reset")}
	}
	return Finding{Check: "quota day", Level: OK, Summary: fmt.Sprintf("%s (%s) open for every account", today, loc)}
}

func checkWebhookSecrets(c Config) []Finding {
	var is issues
	var set []string
	if c.AppSecret == "" {
		is.add(Warn, "WASEND_APP_SECRET is not set: webhook serve cannot check a webhook's signature and will not start", "")
	} else {
		set = append(set, "WASEND_APP_SECRET")
	}
	if c.VerifyToken == "" {
		is.add(Warn, "WASEND_VERIFY_TOKEN is not set: webhook serve cannot answer Meta's verification of the callback URL and will not start", "")
	} else {
		set = append(set, "WASEND_VERIFY_TOKEN")
	}
	summary := "none set"
	if c.Sandbox && len(set) < 2 {
		// The sandbox signs its webhooks with a stand-in secret when
		// none is set.
		return []Finding{{Check: "webhook secrets", Level: OK, Summary: summary + " (the sandbox needs none)"}}
	}
	if len(set) > 0 {
		summary = strings.Join(set, " and ") + " set"
	}
	return []Finding{is.finding("webhook secrets", summary)}
}

// testBody is the webhook the doctor posts to the receiver: signed as
// Meta signs, with no change in it, so applying it changes nothing.
const testBody = `{"object":"whatsapp_business_account","entry":[]}`

// checkWebhookURL does what Meta does with the callback URL: the
// verification GET with the verify token, then a post signed with the app
// secret.
func checkWebhookURL(ctx context.Context, c Config) Finding {
	check := "webhook receiver"
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	u, err := url.Parse(c.WebhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Finding{Check: check, Level: Fail, Summary: "not a URL", Details: []string{fmt.Sprintf("--webhook-url %q: want http:// or https:// and a host", c.WebhookURL)}}
	}
	if c.AppSecret == "" || c.VerifyToken == "" {
		return Finding{Check: check, Level: Fail, Summary: c.WebhookURL + " not tried",
			Details: []string{"set WASEND_APP_SECRET and WASEND_VERIFY_TOKEN as the receiver has them: the test signs its post and verifies the URL with them"}}
	}
	var is issues
	q := u.Query()
	q.Set("hub.mode", "subscribe")
	q.Set("hub.verify_token", c.VerifyToken)
	q.Set("hub.challenge", "wasend-doctor")
	v := *u
	v.RawQuery = q.Encode()
	if status, body, err := do(ctx, hc, http.MethodGet, v.String(), nil, nil); err != nil {
		is.add(Fail, fmt.Sprintf("the verification GET failed: %v", err), "")
	} else if status != http.StatusOK || strings.TrimSpace(body) != "wasend-doctor" {
		is.add(Fail, fmt.Sprintf("the verification GET got %d, not the challenge back: the receiver's WASEND_VERIFY_TOKEN differs, or the URL is not its", status), "")
	}
	hdr := http.Header{"Content-Type": {"application/json"}, "X-Hub-Signature-256": {webhook.Sign([]byte(c.AppSecret), []byte(testBody))}}
	start := c.Now()
	status, _, err := do(ctx, hc, http.MethodPost, c.WebhookURL, []byte(testBody), hdr)
	took := c.Now().Sub(start)
	switch {
	case err != nil:
		is.add(Fail, fmt.Sprintf("the signed test post failed: %v", err), "")
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		is.add(Fail, fmt.Sprintf("the signed test post got %d: the receiver's WASEND_APP_SECRET differs from this one", status), "")
	case status < 200 || status > 299:
		is.add(Fail, fmt.Sprintf("the signed test post got %d", status), "")
	}
	if is.level == Fail {
		return is.finding(check, c.WebhookURL+": not a working receiver")
	}
	return is.finding(check, fmt.Sprintf("%s verified and took a signed post in %d ms", c.WebhookURL, took.Milliseconds()))
}

func do(ctx context.Context, hc *http.Client, method, url string, body []byte, hdr http.Header) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), nil
}

// maxClockSkew is how far Redis's clock may be from this host's: the
// shared buckets refill by Redis's clock, the send window and quota days by
// the host's.
const maxClockSkew = time.Second

func checkRedis(ctx context.Context, c Config) Finding {
	check := "shared limits"
	if c.LimitsErr != nil {
		return Finding{Check: check, Level: Fail, Summary: "Redis not dialed", Details: []string{c.LimitsErr.Error()}}
	}
	before := c.Now()
	at, err := c.Limits.Time(ctx)
	after := c.Now()
	if err != nil {
		return Finding{Check: check, Level: Fail, Summary: "Redis at " + c.Limits.String() + " does not answer",
			Details: []string{fmt.Sprintf("%v: hosts sharing these limits claim nothing until it does", err)}}
	}
	// The host's time of Redis's answer is between before and after.
	skew := at.Sub(before.Add(after.Sub(before) / 2))
	if skew < 0 {
		skew = -skew
	}
	summary := fmt.Sprintf("Redis at %s answers, its clock %d ms from this host's", c.Limits.String(), skew.Milliseconds())
	if skew > maxClockSkew {
		return Finding{Check: check, Level: Fail, Summary: summary,
			Details: []string{fmt.Sprintf("more than %s: buckets refill by Redis's clock, quota days and send windows by each host's; synchronise both clocks (NTP)", maxClockSkew)}}
	}
	return Finding{Check: check, Level: OK, Summary: summary}
}

// verdict is the report's last line, its word first.
func verdict(n, failures, warnings int) string {
	switch {
	case failures > 0:
		return fmt.Sprintf("not ready to send: %d of %d checks failed, %d warned", failures, n, warnings)
	case warnings > 0:
		return fmt.Sprintf("ready to send: none of %d checks failed, %d warned", n, warnings)
	}
	return fmt.Sprintf("ready to send: all %d checks passed", n)
}
