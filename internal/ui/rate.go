package ui

import (
	"math"
	"strconv"
	"time"
)

// FormatRate shows messages per second as people read them: "3.2/s" from
// one a second up, "1 every 5 s" when that is a whole number of seconds up
// to a minute, else "12/min", and "4/h" for the slowest.
func FormatRate(perSecond float64) string {
	switch {
	case !(perSecond > 0) || math.IsInf(perSecond, 0):
		return "0"
	case perSecond >= 1:
		return trimFloat(perSecond) + "/s"
	}
	every := 1 / perSecond
	if every <= 60 && math.Abs(every-math.Round(every)) < 0.01 {
		return "1 every " + strconv.Itoa(int(math.Round(every))) + " s"
	}
	if perMin := perSecond * 60; perMin >= 1 {
		return trimFloat(perMin) + "/min"
	}
	return trimFloat(perSecond*3600) + "/h"
}

// trimFloat rounds to what a person compares: one decimal below 10, none
// from 10 up, and no ".0".
func trimFloat(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// MinRateSpan is the shortest time a measured rate is shown over: fewer
// seconds say nothing about the pace.
const MinRateSpan = 2 * time.Second

// MeasuredRate is n events over span per second, and false when the span is
// too short (or nothing happened) to make a rate of it.
func MeasuredRate(n int, span time.Duration) (float64, bool) {
	if n <= 0 || span < MinRateSpan {
		return 0, false
	}
	return float64(n) / span.Seconds(), true
}

// FormatDuration is a time left or taken, rounded for people: "45 s",
// "12 min", "2 h 5 min", "3 d 4 h".
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return "0 s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Round(time.Minute)/time.Minute)) + " min"
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
		return strconv.Itoa(int(d/time.Hour)) + " h " + strconv.Itoa(int(d%time.Hour/time.Minute)) + " min"
	}
	d = d.Round(time.Hour)
	return strconv.Itoa(int(d/(24*time.Hour))) + " d " + strconv.Itoa(int(d%(24*time.Hour)/time.Hour)) + " h"
}
