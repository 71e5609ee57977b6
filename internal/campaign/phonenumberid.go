package campaign

import (
	"fmt"
	"strings"
)

// whereIDs is where an account's phone number id is found.
const whereIDs = "WhatsApp Manager shows it under Phone numbers (or Meta for Developers, your app's WhatsApp > API Setup), a number of 15–16 digits"

// ValidatePhoneNumberID says what is wrong with a phone number id, or nil.
// Meta's ids are numeric (15–16 digits as issued, though tests and old
// numbers have shorter ones); the usual mistake is the phone number itself,
// which would fail every request with "object does not exist".
func ValidatePhoneNumberID(id string) error {
	if id == "" {
		return fmt.Errorf("the phone number id is empty: %s", whereIDs)
	}
	if strings.Trim(id, "0123456789") == "" {
		return nil
	}
	if strings.Trim(id, "0123456789+-() ./") == "" {
		return fmt.Errorf("%q looks like a phone number, not its phone number id: %s", id, whereIDs)
	}
	return fmt.Errorf("%q is not a phone number id: the id is all digits; %s", id, whereIDs)
}
