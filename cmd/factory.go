package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/logging"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/ui"
)

// Factory builds what commands need, lazily, from flags and environment.
type Factory struct {
	IO     *ui.IOStreams
	Getenv func(string) string
	Now    func() time.Time

	// Set by persistent flags.
	DBPath    string
	Sandbox   bool
	LogFormat string
	LogLevel  string
	// Limits is --limits: the Redis URL of the limits shared between
	// hosts. Read it through LimitsURL.
	Limits string

	// sends is set while a command that sends messages runs (see
	// annotationSends); read by the interrupt handler.
	sends atomic.Bool
	// setsUp is set while a command of setsUp runs: Store may create the
	// database.
	setsUp bool
}

// setsUp are the commands that set wasend up: only they create a database
// where there is none. Every other command reads or maintains one, and a
// missing database is an error there — a wrong path or cron's bare
// environment must not start an empty database and report success.
var setsUp = map[string]bool{
	"wasend account add":     true,
	"wasend campaign import": true,
	"wasend campaign run":    true,
	"wasend config set":      true,
	"wasend portfolio add":   true,
	"wasend tier set":        true,
	"wasend limit global":    true,
	"wasend suppress add":    true,
	"wasend suppress import": true,
	"wasend template sync":   true,
}

// Logger returns the structured logger on stderr that --log-format and
// --log-level ask for.
func (f *Factory) Logger() (*slog.Logger, error) {
	l, err := logging.New(f.IO.ErrOut, f.LogFormat, f.LogLevel)
	if err != nil {
		return nil, usageError{err}
	}
	return l, nil
}

func newFactory() *Factory {
	return &Factory{IO: ui.System(), Getenv: os.Getenv, Now: time.Now}
}

// LimitsURL is where the limits shared between hosts live: --limits, then
// $WASEND_LIMITS; empty when this host keeps them in its own database. The
// URL may hold a password: never print it unredacted.
func (f *Factory) LimitsURL() string {
	if f.Limits != "" {
		return f.Limits
	}
	return f.Getenv("WASEND_LIMITS")
}

// DatabasePath resolves --db, then $WASEND_DB, then the XDG data directory.
// The sandbox has its own file there so demo runs never touch real state.
// A postgres:// URL names the store on Postgres; it may hold a password:
// print it only through runner.RedactDB.
func (f *Factory) DatabasePath() (string, error) { return f.databasePath(f.Sandbox) }

func (f *Factory) databasePath(sandbox bool) (string, error) {
	if f.DBPath != "" {
		return f.DBPath, nil
	}
	if p := f.Getenv("WASEND_DB"); p != "" && !sandbox {
		return p, nil
	}
	dir := f.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home := f.Getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("find the database: set --db or WASEND_DB: %w", err)
			}
		}
		dir = filepath.Join(home, ".local", "share")
	}
	name := "wasend.db"
	if sandbox {
		name = "sandbox.db"
	}
	return filepath.Join(dir, "wasend", name), nil
}

// Location is the time zone times are shown in: $WASEND_TZ, else local
// time. Quota days follow the zone fixed in the database (store.Location).
func (f *Factory) Location() (*time.Location, error) {
	tz := f.Getenv("WASEND_TZ")
	if tz == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("WASEND_TZ=%q: %w", tz, err)
	}
	return loc, nil
}

// location is Location for display: a bad WASEND_TZ is reported by the
// commands that count quota days; showing a time falls back to local.
func (f *Factory) location() *time.Location {
	loc, err := f.Location()
	if err != nil {
		return time.Local
	}
	return loc
}

// Store opens the database through its driver (runner.OpenStore): a SQLite
// file, or the store on Postgres for a postgres:// URL.
func (f *Factory) Store(ctx context.Context) (driver.Driver, error) {
	path, err := f.DatabasePath()
	if err != nil {
		return nil, err
	}
	// Only a zone asked for explicitly is passed on: the database keeps
	// the zone of quota days it was first used with.
	var loc *time.Location
	if f.Getenv("WASEND_TZ") != "" {
		if loc, err = f.Location(); err != nil {
			return nil, err
		}
	}
	// A directory the user named must exist; the default one is created.
	named := f.DBPath != "" || (f.Getenv("WASEND_DB") != "" && !f.Sandbox)
	st, err := runner.OpenStore(ctx, path, driver.Options{Now: f.Now, Location: loc, ExistingDir: named, MustExist: !f.setsUp})
	if errors.Is(err, driver.ErrNoDatabase) {
		return nil, f.noDatabase(path, err)
	}
	if err != nil {
		return nil, err
	}
	if err := f.shareLimits(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// noDatabase explains a database that does not exist: where the path came
// from, and which commands create one.
func (f *Factory) noDatabase(path string, err error) error {
	var from string
	switch {
	case f.DBPath != "":
		from = "named by --db"
	case f.Getenv("WASEND_DB") != "" && !f.Sandbox:
		from = "named by WASEND_DB"
	default:
		which := "the default database"
		if f.Sandbox {
			which = "the sandbox's database"
		}
		under := "$XDG_DATA_HOME/wasend"
		if f.Getenv("XDG_DATA_HOME") == "" {
			under = "$HOME/.local/share/wasend, XDG_DATA_HOME being unset"
		}
		from = which + ", in " + under
		if !f.Sandbox {
			from += ", as neither --db nor WASEND_DB is set"
		}
	}
	create := "`wasend account add`, `campaign import`, `campaign run` or `config set` creates one"
	if f.Sandbox && f.DBPath == "" {
		create = "wasend campaign run --sandbox with a recipient file creates it"
	}
	err = fmt.Errorf("%w (%s); %s, other commands only read or maintain one", err, from, create)
	if sb, e := f.databasePath(true); e == nil && !f.Sandbox && f.DBPath == "" && f.Getenv("WASEND_DB") == "" {
		if _, e := os.Stat(sb); e == nil {
			err = fmt.Errorf("%w; the sandbox demo's database is apart: wasend status --sandbox", err)
		}
	}
	return err
}

// withStore opens the database, runs fn with it and closes it again: the
// one way a command holds the store for its run.
func (f *Factory) withStore(ctx context.Context, fn func(driver.Driver) error) error {
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// openCampaign opens the database and reads the campaign numbered by arg
// (a command-line argument). The caller closes the store.
func (f *Factory) openCampaign(ctx context.Context, arg string) (driver.Driver, campaign.Campaign, error) {
	id, err := parseID(arg)
	if err != nil {
		return nil, campaign.Campaign{}, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, campaign.Campaign{}, err
	}
	c, err := st.Campaign(ctx, id)
	if err != nil {
		st.Close()
		return nil, c, err
	}
	return st, c, nil
}

// Token reads an access token from the environment. It names the variable,
// never the value.
func (f *Factory) Token(env string) (string, error) {
	if env == "" {
		return "", errors.New("no token variable configured")
	}
	v := f.Getenv(env)
	if v == "" {
		return "", fmt.Errorf("environment variable %s is not set", env)
	}
	return v, nil
}
