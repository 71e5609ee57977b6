package cmd

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/runner"
)

func newStoreCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Move wasend's database",
	}
	cmd.AddCommand(newStoreMigrateCmd(f))
	return cmd
}

// storeMigrateOptions are store migrate's flags.
type storeMigrateOptions struct {
	From   string
	To     string
	AsJSON bool
}

func newStoreMigrateCmd(f *Factory) *cobra.Command {
	var o storeMigrateOptions
	cmd := &cobra.Command{
		Use:   "migrate --from FILE.db --to postgres://…",
		Short: "Copy a SQLite database into Postgres, every table of it",
		Long: `Copy every table of a SQLite database (campaigns, their rows and attempts,
the suppression list, webhooks and their statuses, inbound messages,
settings, accounts, portfolios, tiers, rate cards…) into an empty Postgres
database, migrated to wasend's schema first. The copy is one transaction:
ids are kept, each table is read back and compared with the file, and
either all of it is kept or none.

It prints each table's rows in the file and in Postgres, and fails when one
differs. Run again, it changes nothing: a Postgres that holds this very copy
is left as it is; one that holds anything else is refused.

Stop senders on the file first: the copy holds its write lock while it reads.
The URL may carry the password; leaving it out and setting PGPASSWORD keeps
it out of the process list. Neither is ever printed.`,
		Example: `  wasend store migrate --from ~/.local/share/wasend/wasend.db \
      --to postgres://wasend@db.internal:5432/wasend
  PGPASSWORD=… wasend store migrate --from wasend.db \
      --to postgres://wasend@db/wasend --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.From == "" || o.To == "" {
				return usagef("store migrate needs both --from FILE.db and --to postgres://…")
			}
			if isPostgresURL(o.From) {
				return usagef("--from names a Postgres database: give the SQLite file to copy")
			}
			if !isPostgresURL(o.To) {
				// Not repeated: it may hold a password all the same.
				return usagef("--to must be a Postgres URL (postgres://user@host:5432/name)")
			}
			return storeMigrate(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.From, "from", "", "the SQLite database `file` to copy")
	fl.StringVar(&o.To, "to", "", "the Postgres database's `URL`: postgres://user[:password]@host:5432/name")
	addJSONFlag(cmd, &o.AsJSON)
	return cmd
}

func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// storeMoveJSON is store migrate --json.
type storeMoveJSON struct {
	AlreadyCopied bool             `json:"already_copied"`
	Matches       bool             `json:"matches"`
	Tables        []storeTableJSON `json:"tables"`
}

type storeTableJSON struct {
	Table  string `json:"table"`
	Source int64  `json:"source"`
	Copied int64  `json:"copied"`
}

// storeMigrate copies, then prints each table's counts; a copy that did
// not match is printed too, before its error.
func storeMigrate(ctx context.Context, f *Factory, o storeMigrateOptions) error {
	rep, err := runner.MoveStore(ctx, runner.MoveStoreOptions{From: o.From, To: o.To, Now: f.Now})
	if err != nil && len(rep.Tables) == 0 || err != nil && !errors.Is(err, runner.ErrCopyDiffers) {
		return err
	}
	if o.AsJSON {
		out := storeMoveJSON{AlreadyCopied: rep.AlreadyCopied, Matches: rep.Matches(), Tables: []storeTableJSON{}}
		for _, t := range rep.Tables {
			out.Tables = append(out.Tables, storeTableJSON(t))
		}
		if jerr := f.IO.JSON(out); jerr != nil {
			return jerr
		}
	} else {
		t := newTable(f, "TABLE", "IN FILE", "IN POSTGRES").Kind("store_table")
		for _, tc := range rep.Tables {
			t.Row(tc.Table, strconv.FormatInt(tc.Source, 10), strconv.FormatInt(tc.Copied, 10))
		}
		if terr := t.Render(); terr != nil {
			return terr
		}
	}
	if err != nil {
		return err
	}
	var rows int64
	for _, tc := range rep.Tables {
		rows += tc.Source
	}
	if rep.AlreadyCopied {
		f.IO.Infof("Postgres already holds this file's copy (%d tables, %d rows): nothing changed", len(rep.Tables), rows)
	} else {
		f.IO.Infof("copied %d tables, %d rows into Postgres; every table matches the file", len(rep.Tables), rows)
	}
	return nil
}
