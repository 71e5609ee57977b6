package campaign

import (
	"strings"
	"testing"
)

func TestValidatePhoneNumberID(t *testing.T) {
	tests := []struct {
		id   string
		want string // in the error; "" for none
	}{
		{"106540352242922", ""},
		{"1234567890", ""}, // short, but digits: Meta's ids vary in length
		{"+49 151 23456789", "looks like a phone number"},
		{"+4915123456789", "looks like a phone number"},
		{"0151-2345678", "looks like a phone number"},
		{"(030) 1234567", "looks like a phone number"},
		{"", "is empty"},
		{"pn-main", "not a phone number id"},
		{"10654035224292a", "not a phone number id"},
		{" 106540352242922", "looks like a phone number"},
	}
	for _, tt := range tests {
		err := ValidatePhoneNumberID(tt.id)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v, want accepted", tt.id, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want an error saying %q", tt.id, err, tt.want)
		case tt.want != "" && tt.id != "" && !strings.Contains(err.Error(), "WhatsApp Manager"):
			t.Errorf("%q: %v does not say where to find the id", tt.id, err)
		}
	}
}
