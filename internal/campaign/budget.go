package campaign

import "errors"

// ErrBudget is returned by a claim when the next row would take what was
// accepted and what is in flight past the campaign's budget (--max-cost):
// the run stops claiming, lets its requests finish and ends; a run with a
// raised budget continues.
var ErrBudget = errors.New("the campaign's budget is reached")
