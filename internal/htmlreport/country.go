package htmlreport

import (
	"sort"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/wasend/wasend/internal/readmodel"
)

// countries folds the number prefixes SQL grouped into countries. A
// calling code with one region names it outright; where several regions
// share a code (+1, +7, +44, …) the region is read from each prefix's
// smallest number, parsed once per prefix rather than once per recipient.
func countries(prefixes []readmodel.PhonePrefix) []Country {
	var out []Country
	at := map[string]int{}
	for _, p := range prefixes {
		region := regionOf(p)
		i, ok := at[region]
		if !ok {
			i = len(out)
			at[region] = i
			out = append(out, Country{Region: region, PhonePrefix: readmodel.PhonePrefix{Prefix: "+" + callingCode(p.Prefix)}})
		}
		c := &out[i]
		c.Recipients += p.Recipients
		c.Sent += p.Sent
		c.Failed += p.Failed
		c.Delivered += p.Delivered
		c.Read += p.Read
		c.Replied += p.Replied
		c.Expired += p.Expired
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Recipients != out[j].Recipients {
			return out[i].Recipients > out[j].Recipients
		}
		return out[i].Region < out[j].Region
	})
	return out
}

// unknownRegion is CLDR's code for an unknown region.
const unknownRegion = "ZZ"

func regionOf(p readmodel.PhonePrefix) string {
	cc := callingCode(p.Prefix)
	if cc == "" {
		return unknownRegion
	}
	n, _ := strconv.Atoi(cc)
	if regions := phonenumbers.GetRegionCodesForCountryCode(n); len(regions) == 1 {
		return regions[0]
	}
	num, err := phonenumbers.Parse(p.Sample, "")
	if err != nil {
		return unknownRegion
	}
	if r := phonenumbers.GetRegionCodeForNumber(num); r != "" {
		return r
	}
	return unknownRegion
}

// callingCode is the country calling code an E.164 prefix starts with:
// calling codes are a prefix code, so at most one of its first one, two or
// three digits is one.
func callingCode(prefix string) string {
	digits := strings.TrimPrefix(prefix, "+")
	for n := 1; n <= 3 && n <= len(digits); n++ {
		cc, err := strconv.Atoi(digits[:n])
		if err == nil && len(phonenumbers.GetRegionCodesForCountryCode(cc)) > 0 {
			return digits[:n]
		}
	}
	return ""
}
