package runner

import (
	"errors"
	"fmt"
	"io"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
)

// message is the campaign row made from a recipient file's row.
func message(row recipients.Row) campaign.Message {
	return campaign.Message{Line: row.Line, Input: row.Input, Phone: row.Phone, Params: row.Params, Body: row.Body,
		Header: row.Header, Buttons: row.Buttons, Zones: row.Zones}
}

// ErrNoRow is returned by PreviewRow when the file has fewer data rows than
// asked for, or no usable one.
var ErrNoRow = errors.New("no such row")

// PreviewRow reads a recipient file as an import would and returns the
// message made from data row n (1 = the first record after the header;
// blank records do not count), or from the first usable row when n is 0.
// Data row n being unusable comes back as a *recipients.RowError. Nothing
// is stored: duplicates and the suppression list are not looked at.
func PreviewRow(r io.Reader, file string, spec campaign.Spec, ro ReadOptions, n int) (campaign.Message, error) {
	rd, err := recipients.Open(r, file, ro.recipients(spec))
	if err != nil {
		return campaign.Message{}, err
	}
	for i := 1; ; i++ {
		row, err := rd.Next()
		var rowErr *recipients.RowError
		switch {
		case errors.Is(err, io.EOF):
			if n == 0 {
				return campaign.Message{}, fmt.Errorf("%s: %w: no usable row", file, ErrNoRow)
			}
			return campaign.Message{}, fmt.Errorf("%s: %w: asked for data row %d, the file has %d", file, ErrNoRow, n, i-1)
		case errors.As(err, &rowErr):
			if i == n {
				return campaign.Message{}, err
			}
		case err != nil:
			return campaign.Message{}, err
		case n == 0 || i == n:
			return message(row), nil
		}
	}
}
