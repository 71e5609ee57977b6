// Package htmlreport writes `wasend report --html`: one self-contained
// HTML file (inline CSS and SVG, nothing fetched) of one campaign, or two
// side by side — the funnel sent → delivered → read → replied, a timeline
// of sends, throttles and failures, tables by account, template and
// country, the error codes with what they mean.
//
// Its figures are the read models' (internal/readmodel), the ones
// `campaign show --json` prints; the page carries each as a data-figure
// attribute named after show's JSON path, so a test reads both and holds
// them equal. The timeline is summed in SQL per minute, or per a coarser
// bucket over long campaigns (MaxPoints), so a million-row campaign
// renders in about 2 s of CPU into a page of tens of kilobytes.
package htmlreport

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
	"github.com/wasend/wasend/internal/whatsapp"
)

// MaxPoints bounds the timeline's buckets: a minute each while the
// campaign spans under a day, coarser beyond.
const MaxPoints = 1500

// prefixDigits is how many digits of a number (after the "+") SQL groups
// recipients by before their country is read: enough for the regions that
// share a calling code (+1's area codes, +44 7781 Guernsey, +7 7 Kazakhstan).
const prefixDigits = 6

// Reads is what the report reads: *readmodel.Reader.
type Reads interface {
	CampaignDetail(ctx context.Context, id int64) (readmodel.Detail, error)
	CampaignDelivery(ctx context.Context, id int64) (readmodel.DeliveryFigures, error)
	AccountDelivery(ctx context.Context, campaignID int64) (map[string]readmodel.DeliveryFigures, error)
	CampaignTimeline(ctx context.Context, id int64, maxPoints int) (readmodel.Timeline, error)
	PhonePrefixes(ctx context.Context, id int64, digits int) ([]readmodel.PhonePrefix, error)
}

// Options are Load's.
type Options struct {
	// State gives the campaign's true state (running only while a process
	// sends it), as `campaign show` prints it; nil keeps the stored one.
	State func(ctx context.Context, d readmodel.Detail) (string, error)
	// Cost gives the campaign's cost from the one place it is computed
	// (runner.Costs); nil, or a nil *Cost, leaves the page without one.
	Cost func(ctx context.Context, d readmodel.Detail) (*Cost, error)
}

// Campaign is one campaign's part of the report.
type Campaign struct {
	Detail readmodel.Detail
	State  string
	// Delivery is what status webhooks said; Reported is false until one
	// did (show --json then has no delivery object).
	Delivery readmodel.DeliveryFigures
	Reported bool
	Timeline readmodel.Timeline
	// Accounts adds each account's delivery figures to its share.
	Accounts  []Account
	Countries []Country
	Errors    []Error
	// Cost is what the campaign cost, nil when no rate card was ever
	// imported (the page then has no cost section, as show has no cost).
	Cost *Cost
}

// Account is one account's share with what webhooks said of its messages.
type Account struct {
	readmodel.AccountSplit
	Delivery readmodel.DeliveryFigures
}

// Country is the recipients of one country, by their number's region:
// the figures of its prefixes added up, Prefix its calling code ("+49"),
// Sample unset.
type Country struct {
	Region string // ISO 3166-1 alpha-2, "ZZ" when the number says none
	readmodel.PhonePrefix
}

// Error is one error code of the failed rows, with what the one
// classifier (internal/whatsapp) makes of it.
type Error struct {
	readmodel.ErrorGroup
	Class   string
	Meaning string
	Remedy  string
}

// Cost is what a campaign cost as show --json's cost object has it:
// exact decimal strings in the rate card's currency, each "" where show
// omits it. Lines are the estimate beside the actual cost by market ×
// category, as `wasend cost ID` prints them.
type Cost struct {
	Currency  string
	Estimate  string // every row that may still cost
	Actual    string // the delivered messages, as their status webhooks priced them
	Budget    string // --max-cost
	Committed string // what counts against the budget: accepted or in flight
	NotPriced string // why there is no estimate (no card in force, the category unknown)
	Lines     []CostLine
	// Unpriced says which rows the card could not price, as `wasend cost`
	// does: "estimate: 4 message(s) to Brazil, marketing: market not on the card".
	Unpriced []string
}

// CostLine is one market × category: the estimate's rows at Price, and
// the delivered messages (Free of them not charged) and what they cost.
type CostLine struct {
	Market, Category string
	Price            string
	Rows             int64
	Estimate         string
	Delivered, Free  int64
	Actual           string
}

// Load reads campaign id's part of the report.
func Load(ctx context.Context, r Reads, id int64, o Options) (Campaign, error) {
	var c Campaign
	d, err := r.CampaignDetail(ctx, id)
	if err != nil {
		return c, err
	}
	c.Detail, c.State = d, string(d.Campaign.State)
	if o.State != nil {
		if c.State, err = o.State(ctx, d); err != nil {
			return c, err
		}
	}
	if c.Delivery, err = r.CampaignDelivery(ctx, id); err != nil {
		return c, err
	}
	c.Reported = c.Delivery.AnyReport()
	if c.Timeline, err = r.CampaignTimeline(ctx, id, MaxPoints); err != nil {
		return c, err
	}
	byAccount, err := r.AccountDelivery(ctx, id)
	if err != nil {
		return c, err
	}
	for _, a := range d.Accounts {
		c.Accounts = append(c.Accounts, Account{AccountSplit: a, Delivery: byAccount[a.Account]})
	}
	prefixes, err := r.PhonePrefixes(ctx, id, prefixDigits)
	if err != nil {
		return c, err
	}
	c.Countries = countries(prefixes)
	for _, g := range d.Errors {
		c.Errors = append(c.Errors, errorOf(g))
	}
	if o.Cost != nil {
		if c.Cost, err = o.Cost(ctx, d); err != nil {
			return c, err
		}
	}
	return c, nil
}

// errorOf explains one code. Code 0 is a failure without a Graph code (a
// suppressed number), which the classifier would take for a Graph code 0.
func errorOf(g readmodel.ErrorGroup) Error {
	if g.Code == 0 {
		return Error{ErrorGroup: g, Class: "-", Meaning: "no Graph error code: wasend failed the row itself (a suppressed number)"}
	}
	cl := whatsapp.ClassifyCode(g.Code)
	return Error{ErrorGroup: g, Class: cl.String(), Meaning: cl.Meaning(), Remedy: whatsapp.Remedy(g.Code)}
}

// Report is the whole page.
type Report struct {
	Campaigns []Campaign
	// Generated is when the report was made, shown in Loc.
	Generated time.Time
	Loc       *time.Location
}

// Template is one message template's figures over the report's campaigns.
type Template struct {
	Name, Lang string
	Campaigns  []int64
	Recipients int
	Delivery   readmodel.DeliveryFigures
	Failed     int
}

// Templates groups the report's campaigns by template and language, text
// campaigns under "(text)".
func (r Report) Templates() []Template {
	var out []Template
	at := map[[2]string]int{}
	for _, c := range r.Campaigns {
		spec := c.Detail.Campaign.Spec
		key := [2]string{spec.Template, spec.Lang}
		if spec.Template == "" {
			key = [2]string{"(text)", ""}
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, Template{Name: key[0], Lang: key[1]})
		}
		t := &out[i]
		t.Campaigns = append(t.Campaigns, c.Detail.Campaign.ID)
		t.Recipients += c.Detail.Counts.Total()
		t.Failed += c.Detail.Counts[campaign.Failed]
		t.Delivery = addFigures(t.Delivery, c.Delivery)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Recipients > out[j].Recipients })
	return out
}

func addFigures(a, b readmodel.DeliveryFigures) readmodel.DeliveryFigures {
	return readmodel.DeliveryFigures{
		Sent: a.Sent + b.Sent, Delivered: a.Delivered + b.Delivered, Read: a.Read + b.Read,
		FailedAfterSend: a.FailedAfterSend + b.FailedAfterSend, Reported: a.Reported + b.Reported,
		Replied: a.Replied + b.Replied, OptedOut: a.OptedOut + b.OptedOut,
	}
}

// Title names the page after its campaigns.
func (r Report) Title() string {
	switch len(r.Campaigns) {
	case 0:
		return "wasend report"
	case 1:
		c := r.Campaigns[0].Detail.Campaign
		return fmt.Sprintf("Campaign %d: %s", c.ID, c.Name)
	}
	a, b := r.Campaigns[0].Detail.Campaign, r.Campaigns[1].Detail.Campaign
	return fmt.Sprintf("Campaigns %d and %d: %s, %s", a.ID, b.ID, a.Name, b.Name)
}
