package report

import (
	"context"
	"io"
	"time"

	"github.com/wasend/wasend/internal/htmlreport"
	"github.com/wasend/wasend/internal/readmodel"
)

// HTML writes `wasend report --html`'s page of campaigns ids (one, or two
// side by side) to w, read through reads (*readmodel.Reader), each
// campaign in the true state show prints; times in loc.
func (r Reporter) HTML(ctx context.Context, w io.Writer, reads htmlreport.Reads, ids []int64, loc *time.Location) error {
	rep := htmlreport.Report{Generated: r.Now, Loc: loc}
	state := htmlreport.Options{State: func(ctx context.Context, d readmodel.Detail) (string, error) {
		return r.State(ctx, d.Campaign, !d.FirstAttempt.IsZero(), d.Dropped)
	}}
	for _, id := range ids {
		c, err := htmlreport.Load(ctx, reads, id, state)
		if err != nil {
			return err
		}
		rep.Campaigns = append(rep.Campaigns, c)
	}
	return htmlreport.Render(w, rep)
}
