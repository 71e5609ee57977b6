package recipients

import (
	"strings"
	"testing"
)

func TestZones(t *testing.T) {
	for _, tc := range []struct {
		tz, phone, fallback string
		want, wantErr       string
	}{
		{tz: "Asia/Kolkata", phone: "+4915112345678", want: "Asia/Kolkata"},
		{phone: "+4915112345678", want: "Europe/Berlin"},
		{phone: "+12125550123", want: "America/New_York"},
		// A US number without a known area code spans every US zone.
		{phone: "+18005550123", want: "America/Adak,"},
		{phone: "+4915112345678", fallback: "Asia/Tokyo", want: "Europe/Berlin"},
		{phone: "+870773111632", fallback: "Asia/Tokyo", want: "Asia/Tokyo"},
		{phone: "+870773111632", wantErr: "no time zone known for +870773111632"},
		{tz: "Mars/Base", phone: "+4915112345678", wantErr: `"Mars/Base": not an IANA time zone`},
	} {
		got, err := Zones(tc.tz, tc.phone, tc.fallback)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Zones(%q, %q, %q) = %q, %v; want error %q", tc.tz, tc.phone, tc.fallback, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(got, tc.want) {
			t.Errorf("Zones(%q, %q, %q) = %q, %v; want %q", tc.tz, tc.phone, tc.fallback, got, err, tc.want)
		}
	}
}
