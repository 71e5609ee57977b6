package cmd

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/sandbox"
	"github.com/wasend/wasend/internal/store/driver"
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

func templateSync(ctx context.Context, f *Factory, o templateSyncOptions) error {
	return f.withStore(ctx, func(st driver.Driver) error {
		api, err := f.graphAPI(ctx, st, sandbox.Options{})
		if err != nil {
			return err
		}
		defer api.Close()
		reads, err := runner.WABAReads(ctx, st, o.WABA, o.TokenEnv)
		if errors.Is(err, runner.ErrNoWABA) {
			return usageError{err}
		}
		if err != nil {
			return err
		}
		return runner.SyncTemplates(ctx, st, f.IO, api, reads, o.Timeout, f.Now)
	})
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
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				ts, err := readmodel.New(st).Templates(cmd.Context())
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
