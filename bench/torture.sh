#!/usr/bin/env bash
# The reliability suite of issue 6 at full size: crash torture (kill -9 at
# 20 seeded moments), four concurrent processes, a fault storm, the cap
# boundary and a full disk, each judged from the sandbox's own record of
# every request; and issue 30's hosts killed and stopped on one database,
# 60 seeds on a SQLite file and 20 on Postgres (TestHostsKillPostgres,
# which skips without a postgres server). The tests build the wasend binary (without -race) and run
# it, and `wasend sandbox serve`, as separate processes.
#
#   bench/torture.sh                         # everything, full size
#   bench/torture.sh -run CrashTorture       # one scenario
#   bench/torture.sh -args -torture.seed=N   # replay a logged seed (after other go test flags)
#
# The full-disk scenario mounts a tmpfs and is skipped unless run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=1

go build -o /dev/null .
log=$(mktemp)
trap 'rm -f "$log"' EXIT

args=("$@")
if [[ ! " ${args[*]:-} " =~ " -args " ]]; then
  args+=(-args)
fi
start=$(date +%s)
status=0
go test -tags torture -count=1 -v -timeout 60m ./internal/torture/ "${args[@]}" -torture.full 2>&1 | tee "$log" || status=$?
echo
echo "== figures ($(( $(date +%s) - start ))s)"
grep -ho 'FIGURES .*' "$log" || echo "(no figures: see the log above)"
exit "$status"
