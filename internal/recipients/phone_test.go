package recipients

import (
	"errors"
	"sync"
	"testing"
)

func TestNormalizePhone(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		region  string
		want    string
		wantErr error
	}{
		// Germany
		{"DE national mobile", "0151 23456789", "DE", "+4915123456789", nil},
		{"DE national fixed with slash", "030/12345678", "DE", "+493012345678", nil},
		{"DE international", "+49 151 23456789", "", "+4915123456789", nil},
		{"DE 00 prefix", "0049 151 23456789", "", "+4915123456789", nil},
		{"DE trunk zero in brackets", "+49 (0)151 23456789", "", "+4915123456789", nil},
		{"DE digits with country code", "4915123456789", "DE", "+4915123456789", nil},
		{"DE international without plus", "4915123456789", "", "+4915123456789", nil},
		// United Kingdom
		{"GB national mobile", "07400 123456", "GB", "+447400123456", nil},
		{"GB 00 prefix", "0044 7400 123456", "", "+447400123456", nil},
		{"GB fixed dots", "020.7946.0018", "GB", "+442079460018", nil},
		// United States
		{"US national brackets", "(415) 555-2671", "US", "+14155552671", nil},
		{"US international", "+1 415-555-2671", "", "+14155552671", nil},
		{"US digits without plus", "14155552671", "", "+14155552671", nil},
		// China
		{"CN international dashes", "+86 138-0013-8000", "", "+8613800138000", nil},
		{"BR country code in brackets", "(+55) 11 91234-5678", "", "+5511912345678", nil},
		{"CN international without plus", "8613800138000", "", "+8613800138000", nil},
		{"CN national", "138 0013 8000", "CN", "+8613800138000", nil},
		// wa_id style digits in a file whose default region is another country
		{"DE digits with IN region", "4915123456789", "IN", "+4915123456789", nil},
		// India
		{"IN national", "98765 43210", "IN", "+919876543210", nil},
		{"IN international", "+91 98765-43210", "", "+919876543210", nil},
		// Brazil
		{"BR national", "(11) 91234-5678", "BR", "+5511912345678", nil},
		{"BR international", "+55 11 91234 5678", "", "+5511912345678", nil},
		// Region is case-insensitive.
		{"lower-case region", "0151 23456789", "de", "+4915123456789", nil},

		{"empty", "", "DE", "", ErrEmpty},
		{"blank", "   ", "", "", ErrEmpty},
		{"letters", "12ab", "DE", "", ErrNotANumber},
		{"vanity", "1-800-FLOWERS", "US", "", ErrNotANumber},
		{"extension", "+49 30 1234567 ext. 12", "", "", ErrNotANumber},
		{"only punctuation", "+ - ()", "", "", ErrNotANumber},
		{"junk", "n/a", "", "", ErrNotANumber},
		{"too short", "+49 12", "", "", ErrTooShort},
		{"too short national", "12", "DE", "", ErrTooShort},
		{"too short for country", "+1 415 555 26", "", "", ErrTooShort},
		{"too long", "+49 151 234567890123456", "", "", ErrTooLong},
		{"invalid country code", "+999 1234567", "", "", ErrCountryCode},
		{"national without region", "0151 23456789", "", "", ErrNoCountryCode},
		{"invalid for region", "0151 2345", "DE", "", ErrInvalidNumber},
		{"unknown region", "0151 23456789", "XX", "", ErrUnknownRegion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizePhone(tt.input, tt.region)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("NormalizePhone(%q, %q) = %q, %v; want error %v", tt.input, tt.region, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizePhone(%q, %q) = %q, %v; want %q", tt.input, tt.region, got, err, tt.want)
			}
		})
	}
}

func TestNormalizePhoneMessages(t *testing.T) {
	tests := []struct {
		input, region, want string
	}{
		{"0151 2345", "DE", "not a valid phone number for region DE"},
		{"+49 1 2345 6789", "", "not a valid phone number for country code +49"},
		{"", "", "empty"},
		{"12ab", "DE", "not a number"},
		{"0151 23456789", "XX", `unknown region "XX"`},
	}
	for _, tt := range tests {
		_, err := NormalizePhone(tt.input, tt.region)
		if err == nil || err.Error() != tt.want {
			t.Errorf("NormalizePhone(%q, %q) error = %v; want %q", tt.input, tt.region, err, tt.want)
		}
	}
}

// phonenumbers keeps a regexp cache behind a mutex; this guards against a
// future version that does not (run with -race).
func TestNormalizePhoneConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got, err := NormalizePhone("0151 23456789", "DE"); err != nil || got != "+4915123456789" {
					t.Errorf("got %q, %v", got, err)
				}
			}
		})
	}
	wg.Wait()
}
