package recipients

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// phonenumbers.IsValidNumber rebuilds each pattern string and looks it up
// in a mutex-guarded cache on every match, and matches most patterns twice;
// at ~10 patterns a number that is most of a row's cost. This is the same
// decision on the same metadata with compiled patterns held per country
// code. TestValidNumberMatchesPhonenumbers keeps the two in step.

// numberDesc is one phonemetadata.PhoneNumberDesc, compiled.
type numberDesc struct {
	lengths []int32 // empty = any length
	re      *regexp.Regexp
}

func (d numberDesc) match(nsn string) bool {
	if d.re == nil {
		return false
	}
	if len(d.lengths) > 0 && !slices.Contains(d.lengths, int32(len(nsn))) {
		return false
	}
	return d.re.MatchString(nsn)
}

// regionRules is what validity needs from one region's metadata.
type regionRules struct {
	leading *regexp.Regexp // picks this region among those sharing a country code; nil = none
	general numberDesc
	types   []numberDesc // every type getNumberTypeHelper tries
}

// valid mirrors getNumberTypeHelper(...) != UNKNOWN.
func (r *regionRules) valid(nsn string) bool {
	if !r.general.match(nsn) {
		return false
	}
	for _, d := range r.types {
		if d.match(nsn) {
			return true
		}
	}
	return false
}

var (
	// countryRules caches []*regionRules by country calling code. Entries
	// are immutable once stored, so lookups need no lock.
	countryRules sync.Map
	metadataOnce sync.Once
	metadataByID map[string]*phonenumbers.PhoneMetadata // region → metadata; non-geographic ones under "001+cc"
)

func loadMetadata() {
	metadataByID = map[string]*phonenumbers.PhoneMetadata{}
	coll, err := phonenumbers.MetadataCollection()
	if err != nil {
		return // no fast path; parseE164 falls back to phonenumbers.Parse
	}
	for _, md := range coll.GetMetadata() {
		id := md.GetId()
		if id == "001" {
			id = nonGeoID(int(md.GetCountryCode()))
		}
		metadataByID[id] = md
	}
}

func nonGeoID(cc int) string { return "001+" + strconv.Itoa(cc) }

func rulesFor(cc int) []*regionRules {
	if v, ok := countryRules.Load(cc); ok {
		return v.([]*regionRules)
	}
	metadataOnce.Do(loadMetadata)
	var rules []*regionRules
	for _, region := range phonenumbers.GetRegionCodesForCountryCode(cc) {
		id := region
		if region == "001" {
			id = nonGeoID(cc)
		}
		md := metadataByID[id]
		if md == nil {
			continue
		}
		r := &regionRules{general: compileDesc(md.GetGeneralDesc())}
		if ld := md.GetLeadingDigits(); ld != "" {
			r.leading = regexp.MustCompile("^(?:" + ld + ")")
		}
		for _, d := range []*phonenumbers.PhoneNumberDesc{
			md.GetPremiumRate(), md.GetTollFree(), md.GetSharedCost(), md.GetVoip(),
			md.GetPersonalNumber(), md.GetPager(), md.GetUan(), md.GetVoicemail(),
			md.GetFixedLine(), md.GetMobile(),
		} {
			if cd := compileDesc(d); cd.re != nil {
				r.types = append(r.types, cd)
			}
		}
		rules = append(rules, r)
	}
	v, _ := countryRules.LoadOrStore(cc, rules)
	return v.([]*regionRules)
}

func compileDesc(d *phonenumbers.PhoneNumberDesc) numberDesc {
	p := d.GetNationalNumberPattern()
	if p == "" {
		return numberDesc{} // the library's "^(?:)$" matches no non-empty number
	}
	return numberDesc{lengths: d.GetPossibleLength(), re: regexp.MustCompile("^(?:" + p + ")$")}
}

// validNumber is phonenumbers.IsValidNumber for a national significant
// number without leading zeros: the region is chosen as
// GetRegionCodeForNumber does, then the number is checked against it.
func validNumber(cc int, nsn string) bool {
	rules := rulesFor(cc)
	if len(rules) == 1 {
		return rules[0].valid(nsn)
	}
	for _, r := range rules {
		if r.leading != nil {
			if r.leading.MatchString(nsn) {
				return r.valid(nsn)
			}
		} else if r.valid(nsn) {
			return true
		}
	}
	return false
}

// fastNational is fastE164 for national digits of region. It answers only
// where phonenumbers.Parse strips nothing but the plain national prefix
// (DE "0", US "1"; not BR or AR, whose carrier codes and transform rules
// rewrite the number), so a valid result here is Parse's result.
func fastNational(digits, region string) (string, bool) {
	metadataOnce.Do(loadMetadata)
	md := metadataByID[region]
	if md == nil || md.GetNationalPrefixTransformRule() != "" {
		return "", false
	}
	prefix := md.GetNationalPrefix()
	if p := md.GetNationalPrefixForParsing(); p != "" && p != prefix {
		return "", false
	}
	nsn := digits
	if prefix != "" && strings.HasPrefix(digits, prefix) {
		nsn = digits[len(prefix):]
	}
	if nsn == "" || nsn[0] == '0' {
		return "", false
	}
	cc := int(md.GetCountryCode())
	if !validNumber(cc, nsn) {
		return "", false
	}
	return "+" + strconv.Itoa(cc) + nsn, true
}
