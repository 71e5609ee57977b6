package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store"
	"github.com/wasend/wasend/internal/whatsapp"
)

func newTemplateCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "template",
		Short: "Sync and list the message templates of a WhatsApp Business Account",
		Long: `campaign check, plan and run validate a campaign against the synced templates
before anything is sent: the template exists in that language, is APPROVED,
and its body, header and button parameters are what the flags send.`,
	}
	cmd.AddCommand(newTemplateSyncCmd(f), newTemplateListCmd(f))
	return cmd
}

type templateSyncOptions struct {
	WABA, TokenEnv string
	Timeout        time.Duration
}

func newTemplateSyncCmd(f *Factory) *cobra.Command {
	var o templateSyncOptions
	cmd := &cobra.Command{
		Use:   "sync [--waba ID [--token-env VAR]]",
		Short: "Read the message templates of the accounts' WABAs into the database",
		Long: `Read every message template of a WhatsApp Business Account (GET
/{waba-id}/message_templates: name, language, status, category, components)
and keep them in place of those read before from it.

Without --waba it reads the WABA of every account that has one (account
add|set --waba-id), each WABA once, with the token of the first of its
accounts (by name) from that account's --token-env. With --waba it reads that
WABA with the token from --token-env (default WASEND_TOKEN).

With --sandbox it reads the sandbox's templates (the demo accounts' WABA has
them), from a sandbox started for it: nothing goes to Meta, no token is sent.
campaign run --sandbox does the same before it checks its template.`,
		Example: `  wasend template sync
  wasend template sync --waba 102290129340398 --token-env WA_TOKEN_MAIN`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.WABA == "" && cmd.Flags().Changed("token-env") {
				return usagef("--token-env goes with --waba; without --waba each account's own token is used")
			}
			return templateSync(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVar(&o.WABA, "waba", "", "WhatsApp Business Account `ID` (default: the WABA of every account)")
	cmd.Flags().StringVar(&o.TokenEnv, "token-env", "WASEND_TOKEN", "with --waba: environment variable holding an access token for the WABA")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 20*time.Second, "per-request timeout")
	return cmd
}

// wabaRead is one WABA to read and the token variable to read it with.
type wabaRead struct{ WABA, TokenEnv, Account string }

func templateSync(ctx context.Context, f *Factory, o templateSyncOptions) error {
	return f.withStore(ctx, func(st *store.Store) error {
		api, err := f.graphAPI(ctx, st, sandbox.Options{})
		if err != nil {
			return err
		}
		defer api.Close()
		reads, err := wabaReads(ctx, st, o.WABA, o.TokenEnv)
		if err != nil {
			return err
		}
		return syncTemplates(ctx, f, st, api, reads, o.Timeout)
	})
}

// wabaReads is the WABA waba with the token in tokenEnv or, without waba,
// the WABA of every account that has one, each once, with the token of the
// first of its accounts by name.
func wabaReads(ctx context.Context, st *store.Store, waba, tokenEnv string) ([]wabaRead, error) {
	if waba != "" {
		return []wabaRead{{WABA: waba, TokenEnv: tokenEnv}}, nil
	}
	accts, err := st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	sort.Slice(accts, func(i, j int) bool { return accts[i].Name < accts[j].Name })
	var reads []wabaRead
	seen := map[string]bool{}
	for _, a := range accts {
		if a.WABA == "" || seen[a.WABA] {
			continue
		}
		seen[a.WABA] = true
		reads = append(reads, wabaRead{WABA: a.WABA, TokenEnv: a.TokenEnv, Account: a.Name})
	}
	if len(reads) == 0 {
		return nil, usagef("no account has a WABA id: give one with `wasend account set NAME --waba-id ID`, or sync one WABA with --waba ID")
	}
	return reads, nil
}

// syncTemplates reads the templates of every WABA of reads from api into
// the database.
func syncTemplates(ctx context.Context, f *Factory, st *store.Store, api *graphAPI, reads []wabaRead, timeout time.Duration) error {
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
		if err := syncWABA(ctx, f, st, client, r, tokens[i]); err != nil {
			return err
		}
	}
	return nil
}

func syncWABA(ctx context.Context, f *Factory, st *store.Store, client *whatsapp.Client, r wabaRead, token string) error {
	read, err := client.Templates(ctx, r.WABA, token)
	if err != nil {
		if r.Account != "" {
			return fmt.Errorf("read the templates of WABA %s (account %s's token, $%s): %w", r.WABA, r.Account, r.TokenEnv, err)
		}
		return fmt.Errorf("read the templates of WABA %s: %w", r.WABA, err)
	}
	now := f.Now()
	ts := make([]campaign.Template, 0, len(read))
	approved := 0
	for _, t := range read {
		ts = append(ts, campaign.Template{WABA: r.WABA, Name: t.Name, Language: t.Language, Status: t.Status,
			Category: t.Category, ParameterFormat: t.ParameterFormat, Components: string(t.Components), SyncedAt: now})
		if t.Status == "APPROVED" {
			approved++
		}
	}
	if err := st.ReplaceTemplates(ctx, r.WABA, ts); err != nil {
		return err
	}
	f.IO.Infof("synced %d template(s) of WABA %s, %d approved", len(ts), r.WABA, approved)
	return nil
}

func newTemplateListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the synced message templates",
		Long: `List the templates ` + "`wasend template sync`" + ` read: WABA, name, language,
status, category, parameter format and when read.`,
		Example: `  wasend template list`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withStore(cmd.Context(), func(st *store.Store) error {
				ts, err := st.Templates(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					type templateJSON struct {
						WABA            string    `json:"waba_id"`
						Name            string    `json:"name"`
						Language        string    `json:"language"`
						Status          string    `json:"status"`
						Category        string    `json:"category"`
						ParameterFormat string    `json:"parameter_format"`
						SyncedAt        time.Time `json:"synced_at"`
					}
					out := []templateJSON{}
					for _, t := range ts {
						out = append(out, templateJSON{t.WABA, t.Name, t.Language, t.Status, t.Category, t.ParameterFormat, t.SyncedAt.UTC()})
					}
					return f.IO.JSON(out)
				}
				if len(ts) == 0 {
					f.IO.Infof("no templates synced yet: `wasend template sync%s`", dbHint(f))
				}
				t := newTable(f, "WABA", "NAME", "LANGUAGE", "STATUS", "CATEGORY", "PARAMETERS", "SYNCED")
				for _, tp := range ts {
					t.Row(tp.WABA, tp.Name, tp.Language, tp.Status, tp.Category, tp.ParameterFormat, tp.SyncedAt.In(f.location()).Format("01-02 15:04"))
				}
				return t.Render()
			})
		},
	}
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// checkTemplate validates a campaign's spec against the synced templates
// of the WABAs of the enabled accounts before anything is stored or sent
// (campaign.CheckTemplateForAccounts); what could not be checked is said.
func checkTemplate(ctx context.Context, f *Factory, st *store.Store, spec campaign.Spec) error {
	if spec.Kind != campaign.KindTemplate {
		return nil
	}
	ts, err := st.Templates(ctx)
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
		f.IO.Warnf("%s", w)
	}
	return nil
}

// checkResumedTemplate checks a stored campaign's template again before it
// is resumed, as run FILE does at import: the template may have been
// paused, disabled or edited since. A campaign not found is left to the
// run to report.
func checkResumedTemplate(ctx context.Context, f *Factory, st *store.Store, id int64) error {
	c, err := st.Campaign(ctx, id)
	if errors.Is(err, campaign.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := checkTemplate(ctx, f, st, c.Spec); err != nil {
		return fmt.Errorf("campaign %d: %w", id, err)
	}
	return nil
}
