package ui

import (
	"testing"
	"time"
)

func TestFormatRate(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{-1, "0"},
		{3.2, "3.2/s"},
		{3.24, "3.2/s"},
		{1, "1/s"},
		{80, "80/s"},
		{12.6, "13/s"},
		{0.2, "1 every 5 s"},
		{1.0 / 12, "1 every 12 s"},
		{1.0 / 8, "1 every 8 s"},
		{0.2, "1 every 5 s"},
		{1 / 18.564, "3.2/min"},
		{0.2 * 1.003, "12/min"},
		{1.0 / 60, "1 every 60 s"},
		{1.0 / 90, "40/h"},
	} {
		if got := FormatRate(tt.in); got != tt.want {
			t.Errorf("FormatRate(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMeasuredRate(t *testing.T) {
	for _, tt := range []struct {
		n    int
		span time.Duration
		want float64
		ok   bool
	}{
		{5, 2 * time.Millisecond, 0, false}, // a 2 ms span is no rate at all
		{0, time.Minute, 0, false},
		{5, 1999 * time.Millisecond, 0, false},
		{6, 2 * time.Second, 3, true},
		{12, time.Minute, 0.2, true},
	} {
		got, ok := MeasuredRate(tt.n, tt.span)
		if got != tt.want || ok != tt.ok {
			t.Errorf("MeasuredRate(%d, %v) = %v, %v; want %v, %v", tt.n, tt.span, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tt := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0 s"},
		{45 * time.Second, "45 s"},
		{12*time.Minute + 20*time.Second, "12 min"},
		{2*time.Hour + 5*time.Minute, "2 h 5 min"},
		{76 * time.Hour, "3 d 4 h"},
	} {
		if got := FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
