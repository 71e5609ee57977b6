package sandbox

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wasend/wasend/internal/pricing"
)

// categoryOf is what Meta bills a send as: its template's category (from
// the sandbox's templates, or a WABA's set with SetTemplates), "service"
// for a text. The caller holds s.mu.
func (s *Server) categoryOf(msg inMessage) string {
	if msg.Template == nil {
		return string(pricing.Service)
	}
	var ts []struct{ Name, Category string }
	for _, raw := range append([]json.RawMessage{sandboxTemplates}, mapValues(s.wabaTmpl)...) {
		if json.Unmarshal(raw, &ts) != nil {
			continue
		}
		for _, t := range ts {
			if t.Name == msg.Template.Name && t.Category != "" {
				return strings.ToLower(t.Category)
			}
		}
	}
	return string(pricing.Marketing)
}

func mapValues(m map[string]json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(m))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, m[k])
	}
	return out
}

// pricing is the category and type a send's statuses carry: a text, or a
// utility template from a number the person's answer opened a customer
// service window with in the last 24 h, is free (the rules before
// 2026-10-01).
func (h *webhooker) pricing(phoneNumberID, waID, category string, now time.Time) (string, string) {
	open, _ := h.windows.open(waID, phoneNumberID, now)
	if category == string(pricing.Service) || (open && category == string(pricing.Utility)) {
		return category, pricing.TypeFreeCustomerService
	}
	return category, pricing.TypeRegular
}

// servePricingAnalytics answers GET /{version}/{waba-id}/pricing_analytics
// with what the sandbox delivered between start and end (Unix seconds),
// by day, country, category and type, in Meta's shape: volumes of the
// messages delivered (a failed one costs nothing), costs by Options.Card
// (0 without one; free types at 0).
func (s *Server) servePricingAnalytics(w http.ResponseWriter, r *http.Request, _ string) {
	if !s.readable(w, r) {
		return
	}
	q := r.URL.Query()
	start, err1 := strconv.ParseInt(q.Get("start"), 10, 64)
	end, err2 := strconv.ParseInt(q.Get("end"), 10, 64)
	if err1 != nil || err2 != nil || end <= start || q.Get("granularity") == "" {
		writeGraphError(w, http.StatusBadRequest, 100, "(#100) start, end (Unix seconds, end after start) and granularity are required", "", 0)
		return
	}
	type key struct {
		day                     int64
		country, category, kind string
	}
	type point struct {
		volume int64
		cost   pricing.Micros
	}
	markets := pricing.DefaultMarkets()
	points := map[key]*point{}
	for _, d := range s.Deliveries() {
		at := d.At.Unix()
		if d.Final == "failed" || d.Category == "" || at < start || at >= end {
			continue
		}
		place := markets.Lookup(d.To)
		k := key{day: at - at%86400, country: place.ISO, category: strings.ToUpper(d.Category), kind: strings.ToUpper(d.PricingType)}
		p := points[k]
		if p == nil {
			p = &point{}
			points[k] = p
		}
		p.volume++
		if s.card != nil && d.PricingType == pricing.TypeRegular {
			p.cost += pricing.RowPrice(markets, s.card, d.To, pricing.Category(d.Category))
		}
	}
	keys := make([]key, 0, len(points))
	for k := range points {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.country, b.country), cmp.Compare(a.category, b.category), cmp.Compare(a.kind, b.kind))
	})
	dps := []map[string]any{}
	for _, k := range keys {
		p := points[k]
		cost, _ := strconv.ParseFloat(p.cost.String(), 64)
		dps = append(dps, map[string]any{"start": k.day, "end": k.day + 86400, "country": k.country,
			"pricing_category": k.category, "pricing_type": k.kind, "volume": p.volume, "cost": cost})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": []any{map[string]any{"data_points": dps}}})
}
