package campaign

import (
	"strings"
	"testing"
)

func TestCheckBSUID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = a BSUID; else a part of the reason
	}{
		{"US.13491208655302741918", ""},
		{"DE.abcDEF123", ""},
		{"US.ENT.11815799212886844830", ""},
		{"US." + strings.Repeat("9", MaxBSUIDLen), ""},
		{"US." + strings.Repeat("9", MaxBSUIDLen+1), "129 characters"},
		{"us.13491208655302741918", "two capital letters"},
		{"US.", "nothing after"},
		{"US.ENT.", "nothing after"},
		{"US.1349-1208", `'-' is not a letter or digit`},
		{"US.1349 1208", `' ' is not a letter or digit`},
		{"+4915112345678", "not a business-scoped user id"},
		{"U.123", "not a business-scoped user id"},
		{"USA.123", "not a business-scoped user id"},
		{"", "not a business-scoped user id"},
	} {
		got := CheckBSUID(tc.in)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("CheckBSUID(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if IsBSUID(tc.in) != (tc.want == "") {
			t.Errorf("IsBSUID(%q) = %v", tc.in, !(tc.want == ""))
		}
	}
}

func TestCheckListableTakesBSUIDs(t *testing.T) {
	for in, ok := range map[string]bool{"US.13491208655302741918": true, "+4915112345678": true, "us.1": false, "4915112345678": false} {
		if err := CheckListable(in); (err == nil) != ok {
			t.Errorf("CheckListable(%q) = %v", in, err)
		}
	}
}

func TestIdentityLinkPairs(t *testing.T) {
	const id = "US.13491208655302741918"
	for _, tc := range []struct {
		name string
		l    IdentityLink
		want bool
	}{
		{"a number and an id", IdentityLink{Phone: "+4915112345678", UserID: id}, true},
		{"a parent id", IdentityLink{Phone: "+4915112345678", UserID: "US.ENT.11815799212886844830"}, true},
		{"two ids", IdentityLink{Phone: "DE.abc123", UserID: id}, false},
		{"a number without its +", IdentityLink{Phone: "4915112345678", UserID: id}, false},
		{"no number", IdentityLink{UserID: id}, false},
		{"a malformed id", IdentityLink{Phone: "+4915112345678", UserID: "us.1349"}, false},
		{"a number for an id", IdentityLink{Phone: "+4915112345678", UserID: "+4915112345679"}, false},
	} {
		if got := tc.l.Pairs(); got != tc.want {
			t.Errorf("%s: %+v.Pairs() = %v, want %v", tc.name, tc.l, got, tc.want)
		}
	}
}
