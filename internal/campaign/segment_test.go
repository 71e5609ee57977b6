package campaign

import (
	"strings"
	"testing"
)

func TestParseSegment(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Segment
		wantErr string
	}{
		{"not-delivered", Segment{Kind: SegmentNotDelivered}, ""},
		{" Delivered-Not-Read ", Segment{Kind: SegmentDeliveredNotRead}, ""},
		{"read", Segment{Kind: SegmentRead}, ""},
		{"replied", Segment{Kind: SegmentReplied}, ""},
		{"not-replied", Segment{Kind: SegmentNotReplied}, ""},
		{"failed:131026", Segment{Kind: SegmentFailed, Code: 131026}, ""},
		{"failed:-1", Segment{Kind: SegmentFailed, Code: -1}, ""},
		{"failed", Segment{}, "name the error code"},
		{"failed:", Segment{}, "must be a number"},
		{"failed:abc", Segment{}, "must be a number"},
		{"clicked", Segment{}, "click tracking does not exist yet"},
		{"unread", Segment{}, `unknown segment "unread"; valid segments: ` + Segments},
		{"", Segment{}, "unknown segment"},
	} {
		got, err := ParseSegment(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSegment(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSegment(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if back, err := ParseSegment(got.String()); err != nil || back != got {
			t.Errorf("ParseSegment(%q.String()) = %v, %v", tt.in, back, err)
		}
	}
}
