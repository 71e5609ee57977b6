// Package dialect is the database a statement written once for both
// drivers of the store is built for, and the spellings in which their SQL
// differs for every such package (recordsql, claimsql, managesql,
// inboxsql, suppresssql, and readmodel's readers): placeholders, the larger
// of two values, byte order.
// Those packages write SQLite's numbered placeholders (?N) and build each
// statement for each Dialect when they load (Both).
package dialect

import "strings"

// Dialect is the database a statement is built for.
type Dialect int

const (
	SQLite Dialect = iota
	Postgres
)

// Both is what build makes for each dialect, indexed by Dialect: a
// package's statements, built once when it loads.
func Both[T any](build func(Dialect) T) [2]T {
	return [2]T{SQLite: build(SQLite), Postgres: build(Postgres)}
}

// Bind is query in d's placeholders: SQLite's ?N as written, Postgres's
// $N. Every placeholder is numbered, and no literal holds a ?.
func (d Dialect) Bind(query string) string {
	if d == Postgres {
		return strings.ReplaceAll(query, "?", "$")
	}
	return query
}

// Greatest is the larger of a and b: SQLite's two-argument max.
func (d Dialect) Greatest(a, b string) string {
	if d == Postgres {
		return "greatest(" + a + ", " + b + ")"
	}
	return "max(" + a + ", " + b + ")"
}

// Bytewise is expr ordered and compared byte by byte, as SQLite orders
// text: Postgres would otherwise follow the server's locale, which puts
// "a_" before "B" and "b" before "B" where SQLite puts them after, and a
// list would come out in another order on each driver.
func (d Dialect) Bytewise(expr string) string {
	if d == Postgres {
		return expr + ` COLLATE "C"`
	}
	return expr
}
