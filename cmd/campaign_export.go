package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gocarina/gocsv"
	"github.com/spf13/cobra"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/runner"
	"github.com/wasend/wasend/internal/store/driver"
)

type exportOptions struct {
	ID    int64
	Out   string
	State campaign.State
}

func newCampaignExportCmd(f *Factory) *cobra.Command {
	var (
		o     exportOptions
		state string
	)
	cmd := &cobra.Command{
		Use:   "export ID [--out FILE] [--state STATE]",
		Short: "Write a campaign's recipients and their outcomes as CSV",
		Long: `Write one CSV row per recipient of campaign ID, in file order: line, input,
phone (E.164), state, account, attempts, wamid, error_code, error_message,
updated_at, sent_at, and what status webhooks said: delivery (sent,
delivered, read or failed), delivered_at, read_at; what the recipient
answered: replied_at, reply, opted_out_at; when they last wrote to the row's
number (wrote_at; any of yours while it has none) and that customer service
window now: "open until TIME" (free-form --text messages may go) or "closed".
Times are RFC 3339 in UTC; unset values are empty.

--state keeps only the rows in one state: pending, sending, sent, failed,
unknown or expired. --out writes FILE (mode 0600) all at once: it appears
complete or not at all. Rows stream from the database, so any campaign size
exports in constant memory.`,
		Example: `  wasend campaign export 3 --out campaign-3.csv
  wasend campaign export 3 --state failed | cut -d, -f3,8,9`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			o.ID = id
			if state != "" {
				if !validState(campaign.State(state)) {
					return usagef("--state %q: must be one of pending, sending, sent, failed, unknown, expired", state)
				}
				o.State = campaign.State(state)
			}
			return campaignExport(cmd.Context(), f, o)
		},
	}
	cmd.Flags().StringVarP(&o.Out, "out", "o", "", "write to `FILE` instead of stdout")
	cmd.Flags().StringVar(&state, "state", "", "only rows in this state: pending, sending, sent, failed, unknown or expired")
	return cmd
}

func validState(s campaign.State) bool {
	for _, v := range campaign.States {
		if s == v {
			return true
		}
	}
	return false
}

func campaignExport(ctx context.Context, f *Factory, o exportOptions) error {
	return f.withStore(ctx, func(st driver.Driver) error {
		if _, err := st.Campaign(ctx, o.ID); err != nil {
			return err
		}
		if o.Out == "" {
			_, err := writeExport(ctx, f.IO.Out, st, o.ID, o.State, f.Now())
			return err
		}
		var n int
		err := writeFileAtomic("--out", o.Out, 0o600, func(w io.Writer) (werr error) {
			n, werr = writeExport(ctx, w, st, o.ID, o.State, f.Now())
			return werr
		})
		if err != nil {
			return err
		}
		f.IO.Infof("campaign %d: wrote %d row(s) to %s", o.ID, n, o.Out)
		return nil
	})
}

// exportRecord is one CSV row of `campaign export`; the tags are the
// header. Times and codes are text so unset ones stay empty.
type exportRecord struct {
	Line         int    `csv:"line"`
	Input        string `csv:"input"`
	Phone        string `csv:"phone"`
	State        string `csv:"state"`
	Account      string `csv:"account"`
	Attempts     int    `csv:"attempts"`
	WAMID        string `csv:"wamid"`
	ErrorCode    string `csv:"error_code"`
	ErrorMessage string `csv:"error_message"`
	UpdatedAt    string `csv:"updated_at"`
	SentAt       string `csv:"sent_at"`
	Delivery     string `csv:"delivery"`
	DeliveredAt  string `csv:"delivered_at"`
	ReadAt       string `csv:"read_at"`
	RepliedAt    string `csv:"replied_at"`
	Reply        string `csv:"reply"`
	OptedOutAt   string `csv:"opted_out_at"`
	// What a delivered message cost, when a rate card was imported: its
	// status webhooks' category and type, and its price by the card.
	PricingCategory string `csv:"pricing_category"`
	PricingType     string `csv:"pricing_type"`
	Cost            string `csv:"cost"`
	WroteAt         string `csv:"wrote_at"` // when the recipient last wrote to us
	Window          string `csv:"window"`   // the customer service window: "open until …" or "closed"
}

func toExportRecord(r readmodel.ExportRow, now time.Time) exportRecord {
	code := ""
	if r.ErrorCode != 0 {
		code = strconv.Itoa(r.ErrorCode)
	}
	return exportRecord{
		Line: r.Line, Input: r.Input, Phone: r.Phone, State: string(r.State), Account: r.Account,
		Attempts: r.Attempts, WAMID: r.WAMID, ErrorCode: code, ErrorMessage: r.ErrorMessage,
		UpdatedAt: rfc3339(r.UpdatedAt), SentAt: rfc3339(r.SentAt),
		Delivery: string(r.Delivery), DeliveredAt: rfc3339(r.DeliveredAt), ReadAt: rfc3339(r.ReadAt),
		RepliedAt: rfc3339(r.RepliedAt), Reply: r.Reply, OptedOutAt: rfc3339(r.OptedOutAt),
		WroteAt: rfc3339(r.WroteAt), Window: windowState(r.WroteAt, now),
	}
}

// windowState is the customer service window of a recipient who last
// wrote at wrote, at now.
func windowState(wrote, now time.Time) string {
	if campaign.WindowOpen(wrote, now) {
		return "open until " + rfc3339(campaign.WindowUntil(wrote))
	}
	return "closed"
}

// writeExport streams a campaign's rows to w as CSV, in file order. Rows
// go from the store's cursor to gocsv in batches of exportBatch, so memory
// stays bounded whatever the campaign's size. The header is written even
// when no row matches. It returns the number of rows written.
func writeExport(ctx context.Context, w io.Writer, st driver.Driver, id int64, state campaign.State, now time.Time) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := gocsv.DefaultCSVWriter(bw)
	if err := gocsv.MarshalCSV([]exportRecord{}, cw); err != nil { // the header alone
		return 0, fmt.Errorf("write CSV: %w", err)
	}
	c, err := st.Campaign(ctx, id)
	if err != nil {
		return 0, err
	}
	// Held by phone (unique in a campaign): the delivered rows' charges.
	charges, err := runner.RowCharges(ctx, st, c, now)
	if err != nil {
		return 0, err
	}
	n := 0
	batch := make([]exportRecord, 0, exportBatch)
	flush := func() error {
		if err := gocsv.MarshalCSVWithoutHeaders(batch, cw); err != nil {
			return fmt.Errorf("write CSV: %w", err)
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	err = readmodel.New(st).ExportMessages(ctx, id, state, func(r readmodel.ExportRow) error {
		rec := toExportRecord(r, now)
		if ch, ok := charges[r.Phone]; ok {
			rec.PricingCategory, rec.PricingType = ch.Category, ch.Type
			if ch.Priced {
				rec.Cost = ch.Cost.String()
			}
		}
		batch = append(batch, rec)
		if len(batch) < exportBatch {
			return nil
		}
		return flush()
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write CSV: %w", err)
	}
	return n, nil
}

// exportBatch is how many rows wait in memory between the database and
// the CSV encoder.
const exportBatch = 512

// writeFileAtomic writes path through a temporary file in the same
// directory, renamed over path only once complete and synced: readers see
// the old file or the whole new one, never a part. flag names the option
// that gave path, for the errors.
func writeFileAtomic(flag, path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		// The temporary file is ours, not the user's: name what they gave.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: directory %s does not exist", flag, path, dir)
		}
		return fmt.Errorf("%s %s: cannot create a file in %s: %w", flag, path, dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
