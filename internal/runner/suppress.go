package runner

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/recipients"
	"github.com/wasend/wasend/internal/screen"
)

// ErrUnknownRegion: the country given for numbers written without a
// country code is not an ISO 3166 code wasend knows.
var ErrUnknownRegion = recipients.ErrUnknownRegion

// ReadSuppressions reads the numbers of a suppression file at path: a CSV
// with a phone column, read like a recipient file, its national numbers
// in region. Each number comes once, with reason; skip gets every row left
// out (an invalid number, a repeat) with the reason an import gives.
// Nothing is stored, and the list is not consulted: it is what is being
// added to.
func ReadSuppressions(ctx context.Context, path, region, reason string, skip func(campaign.Skip)) ([]campaign.Suppression, error) {
	file, err := recipients.OpenFile("suppression", path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	rd, err := recipients.Open(file, path, recipients.Options{Region: region})
	if err != nil {
		return nil, err
	}
	scr, err := screen.New(ctx, screen.Options{})
	if err != nil {
		return nil, err
	}
	var list []campaign.Suppression
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("import of %s interrupted, nothing stored: %w", path, ctx.Err())
		}
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var rowErr *recipients.RowError
		if errors.As(err, &rowErr) {
			skip(screen.InvalidSkip(rowErr))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("nothing stored: %w", err)
		}
		verdicts, skips, err := scr.Rows(ctx, []recipients.Row{row})
		if err != nil {
			return nil, err
		}
		if verdicts[0] != screen.Keep {
			skip(skips[0])
			continue
		}
		list = append(list, campaign.Suppression{Phone: row.Phone, Reason: reason})
	}
	return list, nil
}

// NormalizePhones turns command-line numbers into E.164 (a business-scoped
// user id stays as written), without repeats,
// in the order given; bad says why each invalid one is ("input": reason).
// The error is ErrUnknownRegion when region is not a country.
func NormalizePhones(args []string, region string) (phones, bad []string, err error) {
	seen := map[string]bool{}
	for _, a := range args {
		p, err := normalizeRecipient(a, region)
		if errors.Is(err, recipients.ErrUnknownRegion) {
			return nil, nil, err
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", QuoteInput(a), err))
			continue
		}
		if !seen[p] {
			seen[p] = true
			phones = append(phones, p)
		}
	}
	return phones, bad, nil
}
