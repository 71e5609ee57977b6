package campaign

import (
	"fmt"
	"strconv"
	"strings"
)

// CallbackData is the biz_opaque_callback_data every send carries
// ("wasend:cC:mM"): Meta echoes it in the message's status webhooks, so a
// status finds its row even when the send's answer (the wamid) never
// reached the database.
func CallbackData(campaignID, messageID int64) string {
	return fmt.Sprintf("wasend:c%d:m%d", campaignID, messageID)
}

// ParseCallbackData reads what CallbackData wrote; ok is false for anything
// else (another sender's data, none at all).
func ParseCallbackData(s string) (campaignID, messageID int64, ok bool) {
	rest, found := strings.CutPrefix(s, "wasend:c")
	if !found {
		return 0, 0, false
	}
	c, m, found := strings.Cut(rest, ":m")
	if !found {
		return 0, 0, false
	}
	cid, err1 := strconv.ParseInt(c, 10, 64)
	mid, err2 := strconv.ParseInt(m, 10, 64)
	if err1 != nil || err2 != nil || cid <= 0 || mid <= 0 {
		return 0, 0, false
	}
	return cid, mid, true
}
