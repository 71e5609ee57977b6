package htmlreport

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/campaign"
	"github.com/wasend/wasend/internal/readmodel"
)

//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":      num,
	"num64":    func(n int64) string { return num(int(n)) },
	"pct":      pct,
	"ratio":    ratio,
	"states":   func() []campaign.State { return campaign.States },
	"count":    func(c campaign.Counts, s campaign.State) int { return c[s] },
	"timeline": timelineChart,
	"funnel":   funnelChart,
	"rate":     func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"dur":      func(d time.Duration) string { return d.Round(time.Second).String() },
	"figure":   func(parts ...any) string { return figureName(parts...) },
	"add":      func(a, b int) int { return a + b },
}).Parse(pageText))

// Render writes the page to w.
func Render(w io.Writer, r Report) error {
	if r.Loc == nil {
		r.Loc = time.UTC
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, view{Report: r}); err != nil {
		return fmt.Errorf("render the HTML report: %w", err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// view is what the template reads: the report and its time zone's
// formatting.
type view struct{ Report }

// When formats t in the report's zone; "-" for none.
func (v view) When(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(v.Loc).Format("2006-01-02 15:04 MST")
}

// AnyCost says whether a campaign of the page has a cost (a rate card was
// imported).
func (v view) AnyCost() bool {
	for _, c := range v.Campaigns {
		if c.Cost != nil {
			return true
		}
	}
	return false
}

// CostCell is a campaign's estimate or actual cost in the side-by-side
// table: the amount and currency, "not priced", or "-" without a card.
func (v view) CostCell(c *Cost, actual bool) string {
	switch {
	case c == nil:
		return "-"
	case c.NotPriced != "":
		return "not priced"
	case actual:
		return c.Actual + " " + c.Currency
	}
	return c.Estimate + " " + c.Currency
}

// Pair says whether two campaigns are shown side by side.
func (v view) Pair() bool { return len(v.Campaigns) == 2 }

// figureName joins a figure's JSON path: accounts.main-01.sent.
func figureName(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ".")
}

// num writes an integer with thin groups of three: 1 000 000.
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pct(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }

// Chart geometry, in SVG user units.
const (
	chartW, chartH   = 720, 200
	padL, padR       = 48, 12
	padT, padB       = 12, 28
	plotW, plotH     = chartW - padL - padR, chartH - padT - padB
	funnelBarH       = 26
	funnelGap        = 10
	funnelLabelWidth = 90
)

// chart is an SVG line chart: one polyline a series, one point a bucket.
type chart struct {
	W, H, PlotX, PlotY, PlotW, PlotH int
	Points                           int // buckets, the points of every series
	Step                             string
	Max                              int
	Series                           []chartSeries
	XLabels                          []chartLabel
}

type chartSeries struct {
	Name   string // sent, throttled, failed
	Points string // "x,y x,y …"
	Total  int
	// Marks are the points drawn as dots too, on a short timeline where a
	// line alone would hide them (one point draws no line).
	Marks []chartPoint
}

type chartPoint struct{ X, Y float64 }

// maxMarks is the longest timeline whose points are dotted.
const maxMarks = 60

type chartLabel struct {
	i      int
	X      float64
	Anchor string // text-anchor
	Text   string
}

// timelineChart lays out a timeline: x the bucket, y its count, on one
// scale for the three series.
func timelineChart(tl readmodel.Timeline, loc *time.Location) chart {
	c := chart{W: chartW, H: chartH, PlotX: padL, PlotY: padT, PlotW: plotW, PlotH: plotH,
		Points: len(tl.Buckets), Step: stepText(tl.Step)}
	for _, b := range tl.Buckets {
		c.Max = max(c.Max, b.Sent, b.Throttled, b.Failed)
	}
	if c.Points == 0 {
		return c
	}
	x := func(i int) float64 {
		if c.Points == 1 {
			return padL + plotW/2
		}
		return padL + float64(i)*plotW/float64(c.Points-1)
	}
	y := func(n int) float64 {
		if c.Max == 0 {
			return padT + plotH
		}
		return padT + plotH - float64(n)*plotH/float64(c.Max)
	}
	for _, s := range []struct {
		name string
		get  func(readmodel.TimelineBucket) int
	}{
		{"sent", func(b readmodel.TimelineBucket) int { return b.Sent }},
		{"throttled", func(b readmodel.TimelineBucket) int { return b.Throttled }},
		{"failed", func(b readmodel.TimelineBucket) int { return b.Failed }},
	} {
		var pts strings.Builder
		cs := chartSeries{Name: s.name}
		total := 0
		for i, b := range tl.Buckets {
			if i > 0 {
				pts.WriteByte(' ')
			}
			n := s.get(b)
			total += n
			if c.Points <= maxMarks {
				cs.Marks = append(cs.Marks, chartPoint{x(i), y(n)})
			}
			pts.WriteString(strconv.FormatFloat(x(i), 'f', 1, 64))
			pts.WriteByte(',')
			pts.WriteString(strconv.FormatFloat(y(n), 'f', 1, 64))
		}
		cs.Points, cs.Total = pts.String(), total
		c.Series = append(c.Series, cs)
	}
	// Labels at the start, the middle and the end of the time axis, the
	// outer ones kept inside the chart.
	last := c.Points - 1
	for _, l := range []struct {
		i      int
		anchor string
	}{{0, "start"}, {last / 2, "middle"}, {last, "end"}} {
		if last == 0 {
			l.anchor = "middle"
		}
		if n := len(c.XLabels); n > 0 && c.XLabels[n-1].i >= l.i {
			continue
		}
		at := tl.Start.Add(time.Duration(l.i) * tl.Step).In(loc)
		c.XLabels = append(c.XLabels, chartLabel{i: l.i, X: x(l.i), Anchor: l.anchor, Text: at.Format("01-02 15:04")})
	}
	return c
}

func stepText(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "minute"
	case d%(24*time.Hour) == 0 && d > 24*time.Hour:
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	case d == 24*time.Hour:
		return "day"
	case d%time.Hour == 0 && d > time.Hour:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d == time.Hour:
		return "hour"
	}
	return fmt.Sprintf("%d minutes", d/time.Minute)
}

// funnel is the funnel's bars: sent, delivered, read, replied, each as
// wide as its share of sent.
type funnel struct {
	W, H int
	Bars []funnelBar
}

type funnelBar struct {
	Step          string
	Value         int
	X, Y, Width   float64
	H             int
	TextX, TextY  float64
	Share, OfPrev string
}

func funnelChart(f readmodel.DeliveryFigures) funnel {
	steps := []struct {
		name string
		n    int
	}{{"sent", f.Sent}, {"delivered", f.Delivered}, {"read", f.Read}, {"replied", f.Replied}}
	barW := float64(chartW - funnelLabelWidth - 190) // room for the figure after the bar
	out := funnel{W: chartW, H: len(steps)*(funnelBarH+funnelGap) + funnelGap}
	prev := f.Sent
	for i, s := range steps {
		w := math.Round(barW*ratio(s.n, f.Sent)*10) / 10
		if s.n > 0 && w < 1 {
			w = 1 // a bar too thin to see is still there
		}
		y := float64(funnelGap + i*(funnelBarH+funnelGap))
		out.Bars = append(out.Bars, funnelBar{Step: s.name, Value: s.n, X: funnelLabelWidth, Y: y, Width: w, H: funnelBarH,
			TextX: funnelLabelWidth + w + 6, TextY: y + funnelBarH/2 + 5,
			Share: pct(ratio(s.n, f.Sent)), OfPrev: pct(ratio(s.n, prev))})
		prev = s.n
	}
	return out
}
