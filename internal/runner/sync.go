package runner

import (
	"fmt"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/whatsapp"
)

// NumberInfo turns what the Graph API said of a number into what wasend
// keeps of it. The error says when the portfolio's messaging limit could
// not be read: such a number is not used, since wasend could not keep
// within a limit it does not know.
func NumberInfo(p whatsapp.PhoneNumber, at time.Time) (campaign.NumberInfo, error) {
	n := campaign.NumberInfo{QualityRating: p.QualityRating, Throughput: p.ThroughputPerSecond(),
		VerifiedName: p.VerifiedName, NameStatus: p.NameStatus, At: at}
	if p.MessagingLimit == "" {
		return n, fmt.Errorf("the messaging limit could not be read (no whatsapp_business_manager_messaging_limit in the answer)")
	}
	limit, err := campaign.ParseLimit(p.MessagingLimit)
	if err != nil {
		return n, fmt.Errorf("the messaging limit could not be read: %w", err)
	}
	n.MessagingLimit = limit
	return n, nil
}
