// Package torture is wasend's reliability suite (issue 6): crash torture,
// concurrent processes, a fault storm, the cap boundary and a full disk;
// and hosts killed and stopped on one shared database (issue 30), on a
// SQLite file and on Postgres (a real one from internal/pgtest; that leg
// skips without postgres).
// Its tests build the wasend binary, run `wasend sandbox serve --record`
// as a separate process, drive wasend processes against it, and judge them
// from the sandbox's own record of every request, not from wasend's
// database.
//
// The tests carry the build tag torture, so `go test ./...` stays fast:
//
//	go test -tags torture -count=1 -v ./internal/torture/                    # short (CI)
//	go test -tags torture -count=1 -v ./internal/torture/ -args -torture.full # bench/torture.sh
//
// -torture.seed=N replays the random kill moments and sandbox faults of a
// run; every scenario logs its seed and a line of figures starting with
// FIGURES.
package torture
