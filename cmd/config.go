package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/webhook"
)

// settings are the keys `wasend config` knows.
var settings = append([]string{"timezone"}, webhook.InboundSettings...)

func newConfigCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Settings stored in the database",
		Long: `Settings kept in the database itself, shared by every wasend using it.

timezone           the IANA zone whose calendar days are quota days. It is
                   fixed on first use ($WASEND_TZ, else the local zone); a
                   WASEND_TZ that disagrees cannot start a quota day. Quota
                   days only move forward: after a change to a zone behind
                   the old one, the current day lasts until the new zone's
                   calendar passes it.
optout-keywords    a message whose whole text is one of these (trimmed, case
                   and accents ignored) suppresses its sender at once
optin-keywords     listed by suppress list for a suppressed number that sends
                   one; lifts nothing by itself (suppress remove does)
optout-buttons     labels of Meta's marketing opt-out button ("Stop
                   promotions"), as its payload carries them
reply-window       how long after our message an answer is a reply (72h)
inbound-retention  how long inbound messages are kept (90d)

A keyword list is one keyword a line or comma-separated; "none" is the
empty list. "default" puts any of these back to its default.`,
	}
	get := &cobra.Command{
		Use:     "get KEY",
		Short:   "Print a setting",
		Long:    "Print a setting of the database; `wasend config --help` lists them.",
		Example: "  wasend config get timezone\n  wasend config get optout-keywords",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := knownSetting(args[0]); err != nil {
				return err
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				if args[0] != "timezone" {
					return printInboundSetting(f, st, cmd, args[0])
				}
				_, err := fmt.Fprintln(f.IO.Out, st.Location())
				return err
			})
		},
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change a setting",
		Long: `Change a setting of the database. timezone takes an IANA zone name (UTC,
Europe/Berlin, America/New_York); quota days follow it from the next
` + "`wasend quota reset`" + `, and never move back to an earlier day.

A keyword list's VALUE is the list itself, or - to read it from standard
input, or @FILE to read a file; a list that does not parse is refused with
the line that does not. Receivers read the settings at their next pass.`,
		Example: `  wasend config set timezone Europe/Berlin
  wasend config set optout-keywords "STOP, STOPP, ARRÊT, BAJA"
  wasend config set optout-keywords @keywords.txt
  wasend config set reply-window 48h
  wasend config set inbound-retention 30d`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := knownSetting(args[0]); err != nil {
				return err
			}
			return f.withStore(cmd.Context(), func(st driver.Driver) error {
				if args[0] != "timezone" {
					return setInboundSetting(f, st, cmd, args[0], args[1])
				}
				old, err := st.SetTimezone(cmd.Context(), args[1])
				if errors.Is(err, campaign.ErrUnknownZone) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(f.IO.Out, "timezone: %s (was %s); quota days only move forward\n", args[1], old)
				return err
			})
		},
	}
	cmd.AddCommand(get, set)
	return cmd
}

func knownSetting(key string) error {
	for _, k := range settings {
		if k == key {
			return nil
		}
	}
	return usagef("unknown setting %q: known are %v", key, settings)
}

// setInboundSetting checks the new value with the others (ParseInbound)
// and stores it only when the whole configuration reads.
func setInboundSetting(f *Factory, st driver.Driver, cmd *cobra.Command, key, value string) error {
	ctx := cmd.Context()
	switch {
	case value == "-":
		b, err := io.ReadAll(f.IO.In)
		if err != nil {
			return fmt.Errorf("read %s from standard input: %w", key, err)
		}
		value = string(b)
	case strings.HasPrefix(value, "@"):
		b, err := os.ReadFile(value[1:])
		if err != nil {
			return usageError{fmt.Errorf("read %s: %w", key, err)}
		}
		value = string(b)
	}
	set, err := st.InboundSettings(ctx)
	if err != nil {
		return err
	}
	unset := strings.TrimSpace(value) == "default"
	if unset {
		delete(set, key)
	} else {
		set[key] = value
	}
	if _, err := webhook.ParseInbound(set); err != nil {
		return usageError{err}
	}
	if err := st.SetInboundSetting(ctx, key, value, unset); err != nil {
		return err
	}
	if unset {
		f.IO.Infof("%s: back to its default", key)
		return nil
	}
	f.IO.Infof("%s: set; receivers apply it from their next pass", key)
	return nil
}

func printInboundSetting(f *Factory, st driver.Driver, cmd *cobra.Command, key string) error {
	set, err := st.InboundSettings(cmd.Context())
	if err != nil {
		return err
	}
	c, err := webhook.ParseInbound(set)
	if err != nil {
		return err
	}
	var lines []string
	switch key {
	case webhook.SettingOptOutKeywords:
		lines = c.OptOut
	case webhook.SettingOptInKeywords:
		lines = c.OptIn
	case webhook.SettingOptOutButtons:
		lines = c.OptOutButtons
	case webhook.SettingReplyWindow:
		lines = []string{days(c.ReplyWindow)}
	case webhook.SettingRetention:
		lines = []string{days(c.Retention)}
	}
	if len(lines) == 0 {
		lines = []string{"none"}
	}
	_, err = fmt.Fprintln(f.IO.Out, strings.Join(lines, "\n"))
	return err
}

// days prints a setting's duration as it is written: whole days from a
// week on (90d), whole hours below (72h).
func days(d time.Duration) string {
	switch {
	case d >= 7*24*time.Hour && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
