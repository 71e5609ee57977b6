package metrics

import (
	"context"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasend/wasend/internal/campaign"
)

var (
	descTokens = prometheus.NewDesc("wasend_tokens_available",
		"Tokens in the account's bucket now.", []string{"account"}, nil)
	descUsed = prometheus.NewDesc("wasend_daily_used",
		"Messages counted against the account's daily cap in the current quota day.", []string{"account"}, nil)
	descCap = prometheus.NewDesc("wasend_daily_cap",
		"The account's daily cap (0: it may send nothing).", []string{"account"}, nil)
	descRate = prometheus.NewDesc("wasend_effective_rate",
		"Messages per second the account may send now: its configured rate scaled down after throttling.", []string{"account"}, nil)
	descQueue = prometheus.NewDesc("wasend_queue_depth",
		"Messages of a watched campaign, by state.", []string{"campaign", "state"}, nil)
	descUp = prometheus.NewDesc("wasend_store_up",
		"1 when the store answered this scrape's queries, 0 when they failed or timed out.", nil, nil)
)

// stateCollector reads the store on every scrape: the limiter state moves
// with the clock and with other processes, so only a read at scrape time
// is true.
type stateCollector struct {
	src       Source
	mu        sync.Mutex
	campaigns []int64
}

func (c *stateCollector) watch(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.campaigns {
		if w == id {
			return
		}
	}
	c.campaigns = append(c.campaigns, id)
}

func (c *stateCollector) watched() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.campaigns...)
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTokens, descUsed, descCap, descRate, descQueue, descUp} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	up := 1.0
	defer func() { ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up) }()

	accts, err := c.src.Accounts(ctx)
	if err != nil {
		up = 0
		ch <- prometheus.NewInvalidMetric(descTokens, err)
	}
	for _, a := range accts {
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, a.Name)
		}
		gauge(descTokens, a.Tokens)
		gauge(descUsed, float64(a.UsedToday))
		gauge(descCap, float64(a.Limits.DailyCap))
		gauge(descRate, effectiveRate(a))
	}
	for _, id := range c.watched() {
		counts, err := c.src.Counts(ctx, id)
		if err != nil {
			up = 0
			ch <- prometheus.NewInvalidMetric(descQueue, err)
			continue
		}
		label := strconv.FormatInt(id, 10)
		for _, st := range campaign.States {
			ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(counts[st]), label, string(st))
		}
	}
}

// effectiveRate is the configured rate scaled by the account's health;
// a factor of 0 means none was recorded.
func effectiveRate(a campaign.AccountStatus) float64 {
	if a.RateFactor <= 0 {
		return a.Limits.Rate
	}
	return a.Limits.Rate * a.RateFactor
}
