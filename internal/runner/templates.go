package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/ui"
	"github.com/wasend/wasend/internal/whatsapp"
)

// AccountLister lists the accounts; driver.Driver is one.
type AccountLister interface {
	Accounts(ctx context.Context) ([]campaign.AccountStatus, error)
}

// TemplateStore is what the template sync and checks need of the
// database: the accounts (their WABAs), the synced templates (read through
// readmodel) and where a sync keeps them. driver.Driver is one.
type TemplateStore interface {
	readmodel.Source
	AccountLister
	ReplaceTemplates(ctx context.Context, waba string, ts []campaign.Template) error
	RecordMarketingStatus(ctx context.Context, waba, status string, at time.Time) error
}

// WABARead is one WABA to read and the token variable to read it with
// (Account: the account whose variable it is, when one was chosen).
type WABARead struct{ WABA, TokenEnv, Account string }

// ErrNoWABA: no account has a WABA id to read the templates of.
var ErrNoWABA = errors.New("no account has a WABA id: give an account one with wasend account set and --waba-id, or sync one WABA with --waba and its id")

// WABAReads is the WABA waba with the token in tokenEnv or, without waba,
// the WABA of every account that has one, each once, with the token of the
// first of its accounts by name.
func WABAReads(ctx context.Context, st AccountLister, waba, tokenEnv string) ([]WABARead, error) {
	if waba != "" {
		return []WABARead{{WABA: waba, TokenEnv: tokenEnv}}, nil
	}
	accts, err := st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(accts, func(i, j int) bool { return accts[i].Name < accts[j].Name })
	var reads []WABARead
	seen := map[string]bool{}
	for _, a := range accts {
		if a.WABA == "" || seen[a.WABA] {
			continue
		}
		seen[a.WABA] = true
		reads = append(reads, WABARead{WABA: a.WABA, TokenEnv: a.TokenEnv, Account: a.Name})
	}
	if len(reads) == 0 {
		return nil, ErrNoWABA
	}
	return reads, nil
}

// SyncTemplates reads the templates of every WABA of reads from api into
// the database, saying on io what it read.
func SyncTemplates(ctx context.Context, st TemplateStore, io *ui.IOStreams, api *API, reads []WABARead, timeout time.Duration, now func() time.Time) error {
	tokens := make([]string, len(reads)) // every token first: nothing is half-synced for a missing one
	for i, r := range reads {
		token, err := api.Token(r.TokenEnv)
		if err != nil {
			if r.Account != "" {
				return fmt.Errorf("account %s (WABA %s): %w", r.Account, r.WABA, err)
			}
			return err
		}
		tokens[i] = token
	}
	client := api.Client(timeout)
	defer client.CloseIdleConnections()
	for i, r := range reads {
		if err := syncWABA(ctx, st, io, client, r, tokens[i], now); err != nil {
			return err
		}
	}
	return nil
}

func syncWABA(ctx context.Context, st TemplateStore, io *ui.IOStreams, client *whatsapp.Client, r WABARead, token string, now func() time.Time) error {
	read, err := client.Templates(ctx, r.WABA, token)
	if err != nil {
		if r.Account != "" {
			return fmt.Errorf("read the templates of WABA %s (account %s's token, $%s): %w", r.WABA, r.Account, r.TokenEnv, err)
		}
		return fmt.Errorf("read the templates of WABA %s: %w", r.WABA, err)
	}
	at := now()
	ts := make([]campaign.Template, 0, len(read))
	approved := 0
	for _, t := range read {
		ts = append(ts, campaign.Template{WABA: r.WABA, Name: t.Name, Language: t.Language, Status: t.Status,
			Category: t.Category, ParameterFormat: t.ParameterFormat, Components: string(t.Components), SyncedAt: at})
		if t.Status == "APPROVED" {
			approved++
		}
	}
	if err := st.ReplaceTemplates(ctx, r.WABA, ts); err != nil {
		return err
	}
	io.Infof("synced %d template(s) of WABA %s, %d approved", len(ts), r.WABA, approved)
	// Whether --api auto may use the Marketing Messages API from this
	// WABA's numbers; a failed read leaves the last one kept.
	status, err := client.MarketingStatus(ctx, r.WABA, token)
	if err != nil {
		io.Warnf("WABA %s: could not read its Marketing Messages API onboarding (%v); --api auto keeps the last status read", r.WABA, err)
		return nil
	}
	if err := st.RecordMarketingStatus(ctx, r.WABA, status, at); err != nil {
		return err
	}
	if status == "" {
		status = "not onboarded"
	}
	io.Infof("WABA %s: Marketing Messages API %s", r.WABA, status)
	return nil
}

// CheckTemplate validates a campaign's spec against the synced templates
// of the WABAs of the enabled accounts before anything is stored or sent
// (campaign.CheckTemplateForAccounts); what could not be checked is said
// on io.
func CheckTemplate(ctx context.Context, st TemplateStore, io *ui.IOStreams, spec campaign.Spec) error {
	if spec.Kind != campaign.KindTemplate {
		return nil
	}
	ts, err := readmodel.New(st).Templates(ctx)
	if err != nil {
		return err
	}
	all, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	var accts []campaign.Account
	for _, a := range all {
		if !a.Disabled {
			accts = append(accts, a.Account)
		}
	}
	res, err := campaign.CheckTemplateForAccounts(spec, accts, ts)
	if err != nil {
		return fmt.Errorf("nothing was sent: %w", err)
	}
	for _, w := range res.Unchecked {
		io.Warnf("%s", w)
	}
	return nil
}

// CheckResumedTemplate checks a stored campaign's template again before it
// is resumed, as run FILE does at import: the template may have been
// paused, disabled or edited since. A campaign not found is left to the
// run to report.
func CheckResumedTemplate(ctx context.Context, st TemplateStore, io *ui.IOStreams, id int64) error {
	c, err := st.Campaign(ctx, id)
	if errors.Is(err, campaign.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := CheckTemplate(ctx, st, io, c.Spec); err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return nil
}
