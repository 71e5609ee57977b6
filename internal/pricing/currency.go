package pricing

// currencies are the ISO 4217 codes a card may be in: every currency Meta
// publishes a card in, and the other common ones.
var currencies = map[string]bool{}

func init() {
	for _, c := range []string{
		"AED", "ARS", "AUD", "BDT", "BRL", "CAD", "CHF", "CLP", "CNY", "COP", "CZK", "DKK", "EGP",
		"EUR", "GBP", "HKD", "HUF", "IDR", "ILS", "INR", "JPY", "KES", "KRW", "KWD", "MXN", "MYR",
		"NGN", "NOK", "NZD", "PEN", "PHP", "PKR", "PLN", "QAR", "RON", "RUB", "SAR", "SEK", "SGD",
		"THB", "TRY", "TWD", "UAH", "USD", "VND", "ZAR",
	} {
		currencies[c] = true
	}
}

// KnownCurrency says whether code is a currency a card may be in.
func KnownCurrency(code string) bool { return currencies[code] }
