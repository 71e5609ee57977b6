package campaign

import (
	"fmt"
	"strconv"
	"strings"
)

// SegmentKind names a part of a campaign's rows, as people asked for it
// (--segment): what Meta said became of their messages, or what the
// recipients answered.
type SegmentKind string

// The segments a campaign's rows can be retargeted by. Each holds rows
// wasend made a request for (pending and in-flight rows are in none of
// them: they may still be sent).
const (
	// SegmentNotDelivered: sent, failed or unknown, never reported
	// delivered or read.
	SegmentNotDelivered SegmentKind = "not-delivered"
	// SegmentDeliveredNotRead: reported delivered, never read.
	SegmentDeliveredNotRead SegmentKind = "delivered-not-read"
	// SegmentRead: reported read.
	SegmentRead SegmentKind = "read"
	// SegmentReplied: the recipient answered the row's message (a reply,
	// as issue 27 item 3 links them).
	SegmentReplied SegmentKind = "replied"
	// SegmentNotReplied: sent, and no answer linked to it.
	SegmentNotReplied SegmentKind = "not-replied"
	// SegmentFailed: failed with the error code Segment.Code (failed:CODE).
	SegmentFailed SegmentKind = "failed"
)

// segmentClicked is refused by name: Meta reports no button clicks
// wasend could count yet.
const segmentClicked = "clicked"

// Segments lists the valid --segment values, as an error names them.
const Segments = "not-delivered, delivered-not-read, read, replied, not-replied, failed:CODE (e.g. failed:131026)"

// Segment is a part of a campaign's rows (--segment).
type Segment struct {
	Kind SegmentKind
	Code int // the error code of SegmentFailed
}

// String is the segment as written on the command line.
func (s Segment) String() string {
	if s.Kind == SegmentFailed {
		return fmt.Sprintf("%s:%d", s.Kind, s.Code)
	}
	return string(s.Kind)
}

// ParseSegment reads a --segment value. An unknown one is refused with the
// list of valid ones.
func ParseSegment(v string) (Segment, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	switch SegmentKind(s) {
	case SegmentNotDelivered, SegmentDeliveredNotRead, SegmentRead, SegmentReplied, SegmentNotReplied:
		return Segment{Kind: SegmentKind(s)}, nil
	}
	if s == segmentClicked {
		return Segment{}, fmt.Errorf("segment %q: click tracking does not exist yet, so no row is known to have been clicked; valid segments: %s", v, Segments)
	}
	if code, ok := strings.CutPrefix(s, string(SegmentFailed)+":"); ok {
		n, err := strconv.Atoi(code)
		if err != nil || code == "" {
			return Segment{}, fmt.Errorf("segment %q: the code after failed: must be a number, e.g. failed:131026", v)
		}
		return Segment{Kind: SegmentFailed, Code: n}, nil
	}
	if s == string(SegmentFailed) {
		return Segment{}, fmt.Errorf("segment %q: name the error code, e.g. failed:131026 (`wasend campaign failed ID` lists the codes)", v)
	}
	return Segment{}, fmt.Errorf("unknown segment %q; valid segments: %s", v, Segments)
}
