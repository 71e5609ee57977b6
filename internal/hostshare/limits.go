package hostshare

import "github.com/wasend/wasend/internal/limits/redisgate"

// CheckURL reports what is wrong with rawURL as a limits URL (a wrong
// scheme, a URL that does not parse, a bad database number), without
// connecting: a caller tells a mistyped URL (usage) from a Redis that does
// not answer. The password never appears in the error.
func CheckURL(rawURL string) error { return redisgate.CheckURL(rawURL) }
