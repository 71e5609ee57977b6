package inboxsql

import "fmt"

// SavepointPart is driver.InboxTx.Part on either driver: apply under a
// savepoint, undone alone when it fails for a reason of its own (not
// fault), exec running each statement.
func SavepointPart(exec func(stmt string) error, apply func() error, fault func(error) bool) (skip, err error) {
	if err := exec(`SAVEPOINT webhook_part`); err != nil {
		return nil, err
	}
	if err := apply(); err != nil {
		if fault(err) {
			return nil, err
		}
		if rerr := exec(`ROLLBACK TO webhook_part`); rerr != nil {
			return nil, fmt.Errorf("undo: %w", rerr)
		}
		skip = err
	}
	if err := exec(`RELEASE webhook_part`); err != nil {
		return nil, err
	}
	return skip, nil
}
