#!/usr/bin/env bash
# Issue 25: a portfolio's reach costs a claim the same whatever its window
# holds. Two numbers in a portfolio Meta limits to 100K, unlimited
# throughput, a list of 60,000 new recipients sent to the sandbox: the rate
# of each tenth of the list (its attempts in order, the first tenth's
# start-up included), and the last tenth's against the first's (target:
# at least 0.85). Then the claim alone, from go test -bench: one claim with
# 1,000 and with 1,000,000 recipients in the window.
#
#   bench/reach.sh [ROWS]          # 60,000 rows
#   BENCH=0 bench/reach.sh         # skip the go test -bench figures
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-60000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/wasend" .
port=$(freeport)
start_server "$work/wasend" "$work" "$port" sandbox
recipients "$rows" "$work/list.csv"
export WASEND_API_BASE="http://127.0.0.1:$port" WASEND_TOKEN=bench WASEND_DB="$work/wasend.db"
w=("$work/wasend" -q)
for tier in new warm active; do "${w[@]}" tier set $tier --rate 1000000 --burst 1000000 --daily-cap 1000000000; done
"${w[@]}" portfolio add big --limit 100k
for i in 1 2; do
  "${w[@]}" account add bench-$i --phone-number-id 10000000000000$i --tier active --throughput unlimited 2>/dev/null
  "${w[@]}" account set bench-$i --portfolio big
done
start=$(date +%s.%N)
"${w[@]}" campaign run "$work/list.csv" --template wasend_demo --lang en_US --params name --log-level error
end=$(date +%s.%N)
printf '%d rows imported and sent in %.1f s\n  command: wasend campaign run list.csv (2 numbers in portfolio big, --limit 100k, unlimited throughput)\n' \
  "$rows" "$(echo "$end - $start" | bc -l)"

# Each tenth of the attempts in claim order: how many, over how long from
# the last claim of the tenth before (the first from the first claim).
sqlite3 "$WASEND_DB" <<'SQL' >"$work/deciles"
WITH a AS (SELECT claimed_at, ntile(10) OVER (ORDER BY claimed_at, id) AS d FROM attempts),
t AS (SELECT d, count(*) AS n, max(claimed_at) AS last FROM a GROUP BY d)
SELECT t.d, t.n, (t.last - coalesce(lag(t.last) OVER (ORDER BY t.d), (SELECT min(claimed_at) FROM attempts))) / 1e9 FROM t ORDER BY t.d;
SQL
awk -F'|' '{ r = ($3 > 0) ? $2 / $3 : 0; rate[$1] = r; printf "tenth %2d: %6d attempts in %6.2f s: %8.0f msgs/s\n", $1, $2, $3, r }
  END { printf "FIGURES last tenth / first tenth: %.2f (target >= 0.85)\n", rate[10] / rate[1] }' "$work/deciles"
printf 'reach used: %s\n' "$("$work/wasend" portfolio list 2>/dev/null | grep -w big || true)"

if [[ ${BENCH:-1} != 0 ]]; then
  echo "== one claim of 64 new recipients, by the window's size"
  echo "   command: go test ./internal/store/ -run '^\$' -bench ClaimReachWindow -benchtime 1000x"
  go test ./internal/store/ -run '^$' -bench ClaimReachWindow -benchtime 1000x | grep '^Benchmark' |
    sed -E 's/^BenchmarkClaimReachWindow\/(window=[0-9]+)-[0-9]+ +[0-9]+ +[0-9]+ ns\/op/FIGURES claim with \1:/'
fi
