package recipients

import (
	"fmt"
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
// decision on the same metadata, with each region's patterns compiled into
// one automaton (digitDFA) held per country code: even compiled regexps,
// tried one after another, were a tenth of an import's CPU.
// TestValidNumberMatchesPhonenumbers and FuzzValidNumber keep the two in
// step.

// regionRules is what validity needs from one region's metadata: its
// general pattern and every type's that getNumberTypeHelper tries, matched
// at once by one automaton (pattern 0 the general one), and each
// pattern's possible lengths (empty: any).
type regionRules struct {
	leading *regexp.Regexp // picks this region among those sharing a country code; nil = none
	dfa     *digitDFA      // nil: the region has no general pattern, so no number is valid
	lengths [][]int32
}

// valid mirrors getNumberTypeHelper(...) != UNKNOWN.
func (r *regionRules) valid(nsn string) bool {
	if r.dfa == nil {
		return false
	}
	matched := r.dfa.matchAll(nsn)
	if !r.matches(matched, 0, nsn) {
		return false
	}
	for k := 1; k < len(r.lengths); k++ {
		if r.matches(matched, k, nsn) {
			return true
		}
	}
	return false
}

// matches reports whether pattern k matched nsn and allows its length.
func (r *regionRules) matches(matched uint32, k int, nsn string) bool {
	return matched&(1<<k) != 0 && (len(r.lengths[k]) == 0 || slices.Contains(r.lengths[k], int32(len(nsn))))
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
		r, err := compileRules(md)
		if err != nil {
			// No fast path for this country code: validNumber says no,
			// and phonenumbers.Parse decides. TestValidNumberMatchesPhonenumbers
			// fails if this happens to any country.
			rules = nil
			break
		}
		rules = append(rules, r)
	}
	v, _ := countryRules.LoadOrStore(cc, rules)
	return v.([]*regionRules)
}

// compileRules compiles md's patterns into one automaton.
func compileRules(md *phonenumbers.PhoneMetadata) (*regionRules, error) {
	r := &regionRules{}
	if ld := md.GetLeadingDigits(); ld != "" {
		r.leading = regexp.MustCompile("^(?:" + ld + ")")
	}
	general := md.GetGeneralDesc()
	if general.GetNationalNumberPattern() == "" {
		return r, nil // the library's "^(?:)$" matches no non-empty number
	}
	patterns := []string{general.GetNationalNumberPattern()}
	r.lengths = [][]int32{general.GetPossibleLength()}
	for _, d := range []*phonenumbers.PhoneNumberDesc{
		md.GetPremiumRate(), md.GetTollFree(), md.GetSharedCost(), md.GetVoip(),
		md.GetPersonalNumber(), md.GetPager(), md.GetUan(), md.GetVoicemail(),
		md.GetFixedLine(), md.GetMobile(),
	} {
		if p := d.GetNationalNumberPattern(); p != "" {
			patterns = append(patterns, p)
			r.lengths = append(r.lengths, d.GetPossibleLength())
		}
	}
	var err error
	if r.dfa, err = newDigitDFA(patterns); err != nil {
		return nil, fmt.Errorf("region %s: %w", md.GetId(), err)
	}
	return r, nil
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
