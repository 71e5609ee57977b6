package webhook

import "github.com/wasend/wasend/internal/campaign"

// ThroughputUpgrade is the phone_number_quality_update event that says a
// number's throughput was raised to 1,000 msg/s (docs/cloud-api.md#limits);
// it ends the minute of 131057 answers the upgrade takes.
const ThroughputUpgrade = "THROUGHPUT_UPGRADE"

// UpgradedThroughput is the throughput, in messages per second, of a
// number after a THROUGHPUT_UPGRADE.
const UpgradedThroughput = 1000

// throughputUpgrade reads an upgrade from a phone_number_quality_update
// value; ok is false for any other event.
func throughputUpgrade(field string, v accountValue) (campaign.AccountEvent, bool) {
	if field != "phone_number_quality_update" || v.Event != ThroughputUpgrade {
		return campaign.AccountEvent{}, false
	}
	ev := campaign.AccountEvent{PhoneNumberID: v.PhoneNumberID, DisplayNumber: v.DisplayPhoneNumber, Field: field, Event: v.Event}
	if ev.DisplayNumber == "" {
		ev.DisplayNumber = v.PhoneNumber
	}
	return ev, true
}
