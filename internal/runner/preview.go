package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/dispatch"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/whatsapp"
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
	m, _, err := previewRow(r, file, spec, ro, n)
	return m, err
}

// previewRow is PreviewRow, also giving the column the numbers are read
// from once the header is read.
func previewRow(r io.Reader, file string, spec campaign.Spec, ro ReadOptions, n int) (campaign.Message, recipients.PhoneColumn, error) {
	rd, err := recipients.Open(r, file, ro.recipients(spec))
	if err != nil {
		return campaign.Message{}, recipients.PhoneColumn{}, err
	}
	m, err := nthRow(rd, file, n)
	return m, rd.PhoneColumn(), err
}

// nthRow reads rd up to data row n (0: the first usable row).
func nthRow(rd *recipients.Reader, file string, n int) (campaign.Message, error) {
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

// previewCallbackData stands in for the campaign and message numbers a row
// only gets when it is imported.
const previewCallbackData = "wasend:c<ID>:m<ID>"

// Preview is one row of a recipient file as it would be sent.
type Preview struct {
	Line  int    // the row's line in the file
	Phone string // its number in E.164
	// Column is the column the number was read from, and the header's
	// other phone-like columns.
	Column recipients.PhoneColumn
	// Body is the Cloud API request's JSON body, indented, with a newline
	// at the end; the campaign and message numbers in its callback data
	// are placeholders.
	Body []byte
}

// PreviewRequest reads a recipient file as an import would (PreviewRow) and
// builds the request body data row n (0: the first usable row) would be
// sent with. Data row n being unusable is an error that says so.
func PreviewRequest(r io.Reader, file string, spec campaign.Spec, ro ReadOptions, n int) (Preview, error) {
	m, col, err := previewRow(r, file, spec, ro, n)
	var rowErr *recipients.RowError
	if errors.As(err, &rowErr) {
		return Preview{}, fmt.Errorf("data row %d would be skipped: %w", n, err)
	}
	if err != nil {
		return Preview{}, err
	}
	req := dispatch.Request(campaign.Campaign{Spec: spec}, campaign.Claim{Message: m}, "")
	req.CallbackData = previewCallbackData
	body, err := whatsapp.BuildBody(req)
	if err != nil {
		return Preview{}, fmt.Errorf("line %d: %w", m.Line, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		return Preview{}, err
	}
	out.WriteByte('\n')
	return Preview{Line: m.Line, Phone: m.Phone, Column: col, Body: out.Bytes()}, nil
}

// OpenFile opens a recipient file for reading as an import does: every
// problem (missing, unreadable, a directory) names the file once.
func OpenFile(path string) (io.ReadCloser, error) { return recipients.OpenFile("recipient", path) }
