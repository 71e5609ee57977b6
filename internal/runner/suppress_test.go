package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wasend/wasend/internal/campaign"
)

func TestNormalizePhones(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		region    string
		wantOut   []string
		wantBad   int
		wantError error
	}{
		{name: "E.164 and national, repeats once", args: []string{"+4915112345678", "015112345678", "+4915112345678"}, region: "DE",
			wantOut: []string{"+4915112345678"}},
		{name: "order kept", args: []string{"+4915100000002", "+4915100000001"}, wantOut: []string{"+4915100000002", "+4915100000001"}},
		{name: "invalid ones said, valid kept", args: []string{"abc", "+4915100000001", "0151"}, wantOut: []string{"+4915100000001"}, wantBad: 2},
		{name: "national without a region", args: []string{"015112345678"}, wantBad: 1},
		{name: "business-scoped user ids as written", args: []string{"US.13491208655302741918", "+4915100000001", "us.1", "US.13491208655302741918"},
			wantOut: []string{"US.13491208655302741918", "+4915100000001"}, wantBad: 1},
		{name: "unknown region", args: []string{"015112345678"}, region: "XX", wantError: ErrUnknownRegion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, bad, err := NormalizePhones(tc.args, tc.region)
			if !errors.Is(err, tc.wantError) {
				t.Fatalf("err %v, want %v", err, tc.wantError)
			}
			if !slices.Equal(out, tc.wantOut) || len(bad) != tc.wantBad {
				t.Errorf("got %q, bad %q; want %q and %d bad", out, bad, tc.wantOut, tc.wantBad)
			}
		})
	}
}

func TestReadSuppressions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "optouts.csv")
	csv := "name,phone\nA,+4915100000001\nB,not a number\nC,015100000001\nD,+4915100000002\n"
	if err := os.WriteFile(path, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	var skipped []int
	list, err := ReadSuppressions(context.Background(), path, "DE", "replied STOP", func(k campaign.Skip) { skipped = append(skipped, k.Line) })
	if err != nil {
		t.Fatal(err)
	}
	var phones []string
	for _, s := range list {
		phones = append(phones, s.Phone)
		if s.Reason != "replied STOP" {
			t.Errorf("%s: reason %q", s.Phone, s.Reason)
		}
	}
	if want := []string{"+4915100000001", "+4915100000002"}; !slices.Equal(phones, want) {
		t.Errorf("numbers %q, want %q", phones, want)
	}
	// Line 3 is invalid, line 4 repeats line 2's number.
	if want := []int{3, 4}; !slices.Equal(skipped, want) {
		t.Errorf("skipped lines %v, want %v", skipped, want)
	}
	if _, err := ReadSuppressions(context.Background(), path, "XX", "", func(campaign.Skip) {}); !errors.Is(err, ErrUnknownRegion) {
		t.Errorf("region XX: err %v, want ErrUnknownRegion", err)
	}
}
