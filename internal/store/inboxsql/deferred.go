package inboxsql

import (
	"github.com/wasend/wasend/internal/store/driver"
	"github.com/wasend/wasend/internal/store/rowscan"
)

// DeferredSQL reads driver.InboxTx.Deferred's rows (ScanDeferred), in the
// order of their webhook times, on either driver: the limit's placeholder
// follows.
const DeferredSQL = `SELECT s.message_id, s.wamid, s.status, s.at, s.recipient, s.callback_data,
	coalesce(s.error_code, 0), coalesce(s.error_title, ''), s.pricing
	FROM message_statuses s JOIN messages m ON m.id = s.message_id
	WHERE s.applied = 0 AND m.state <> 'sending' ORDER BY s.at LIMIT `

// ScanDeferred reads a row of DeferredSQL.
func ScanDeferred(sc rowscan.Scanner) (d driver.DeferredStatus, err error) {
	var at int64
	err = sc.Scan(&d.ID, &d.Ev.WAMID, &d.Ev.Status, &at, &d.Ev.Recipient, &d.Ev.CallbackData,
		&d.Ev.ErrorCode, &d.Ev.ErrorTitle, &d.Ev.Pricing)
	d.Ev.At = rowscan.FromNanos(at)
	return d, err
}
