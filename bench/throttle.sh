#!/usr/bin/env bash
# Throttle reaction (issue 25): how much of their allowed rate three numbers
# use when the server throttles them, read from the sandbox's record.
#
#   bench/throttle.sh [ROWS] [RATE] [CEILING]   # 4,800 rows, 30 msg/s a number, a ceiling of 20
#   WASEND_BIN=/tmp/wasend-old bench/throttle.sh  # another build of wasend sends
#   CASES=Redis bench/throttle.sh                 # only the cases whose name has Redis
#   HOSTS=3 CASES=Redis bench/throttle.sh         # three hosts on Redis rather than two
#   RECORDS=DIR bench/throttle.sh                 # keep each case's sandbox record in DIR
#
# noise:   2 % of requests answered 130429 at random, no ceiling: the share
#          does not depend on the rate, so the numbers should keep theirs
#          (utilisation = accepted msg/s over the three numbers' RATE).
# ceiling: the server accepts CEILING msg/s a number and answers the rest
#          130429, below the RATE wasend is configured with: wasend should
#          find the ceiling and hold it (utilisation = accepted msg/s over
#          3 × CEILING) with few requests throttled.
# Both again on two hosts (HOSTS) sharing the limits through Redis
# (--limits, each host its own database and its shard of the list), when
# redis-server is there.
#
# The span is the sandbox's first to last request; "throttled" is the share
# of all requests answered 130429, and of those after the first 15 s (once
# a ceiling is found, what holding it costs).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-4800}
rate=${2:-30}
ceiling=${3:-20}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT

wasend_bin "$work/wasend"
wasend="$work/wasend"

recipients "$rows" "$work/list.csv"
export WASEND_TOKEN=bench

redis_url=""
if command -v redis-server >/dev/null; then
  rport=$(freeport)
  redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" --logfile "$work/redis.log" &
  for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis_url="redis://127.0.0.1:$rport/0"
fi

# setup DB: three numbers at RATE msg/s (a burst of one second's worth).
setup() {
  export WASEND_DB="$1"
  for i in 1 2 3; do
    "$wasend" -q account add bench-$i --phone-number-id 10000000000000$i --tier active --throughput unlimited 2>/dev/null
    "$wasend" -q account set bench-$i --rate "$rate" --burst "$rate" --daily-cap 1000000
  done
}

# report NAME RECORD ALLOWED: utilisation and throttled share of a record.
report() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
from datetime import datetime
name, path, allowed = sys.argv[1], sys.argv[2], float(sys.argv[3])
def ts(s):
    s = s.rstrip('Z')
    if '.' in s:
        head, frac = s.split('.')
        s = head + '.' + frac[:6]
    return datetime.fromisoformat(s.replace('+00:00', ''))
recs = [json.loads(l) for l in open(path)]
if not recs:
    print(f"{name}: no requests"); sys.exit()
at = sorted(ts(r['at']) for r in recs)
span = (at[-1] - at[0]).total_seconds() or 1e-9
acc = sum(r['outcome'] in ('accepted', 'slow', 'dropped') for r in recs)
thr = sum(r['code'] == 130429 for r in recs)
late = [r for r in recs if (ts(r['at']) - at[0]).total_seconds() >= 15]
lthr = sum(r['code'] == 130429 for r in late)
early = len(recs) - len(late)
print(f"{name}: {acc} accepted in {span:.1f} s = {acc/span:.1f} msg/s of {allowed:g} allowed: utilisation {acc/span/allowed:.2f}; "
      f"throttled {thr} of {len(recs)} requests ({100*thr/len(recs):.1f} %): in the first 15 s {thr-lthr} of {early} ({100*(thr-lthr)/max(early,1):.1f} %), "
      f"after them {lthr} of {len(late)} ({100*lthr/max(len(late),1):.1f} %)")
EOF
}

# run NAME HOSTS ALLOWED SANDBOX_FLAGS...: one sandbox, HOSTS wasend processes.
run() {
  local name=$1 hosts=$2 allowed=$3
  shift 3
  case "$name" in *${CASES:-}*) ;; *) return ;; esac
  local port rec="$work/$name.jsonl" pids=()
  port=$(freeport)
  : >"$rec"
  "$wasend" sandbox serve --addr 127.0.0.1:"$port" --pair-interval -1s --record "$rec" "$@" 2>"$work/$name-sandbox.log" &
  local sandbox=$!
  waitport "$port"
  export WASEND_API_BASE="http://127.0.0.1:$port"
  for h in $(seq "$hosts"); do
    (setup "$work/$name-$h.db")
  done
  if [ "$hosts" -gt 1 ]; then
    WASEND_DB="$work/$name-1.db" WASEND_LIMITS="$redis_url" "$wasend" -q quota reset --force >/dev/null
  fi
  for h in $(seq "$hosts"); do
    local extra=()
    [ "$hosts" -gt 1 ] && extra=(--shard "$h/$hosts")
    WASEND_DB="$work/$name-$h.db" WASEND_LIMITS="$([ "$hosts" -gt 1 ] && echo "$redis_url")" \
      "$wasend" -q campaign run "$work/list.csv" --template wasend_demo --lang en_US --params name \
      "${extra[@]}" --log-level error >"$work/$name-$h.out" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { echo "$name: a wasend process failed:"; cat "$work/$name"-*.out; }; done
  kill "$sandbox" 2>/dev/null || true
  wait "$sandbox" 2>/dev/null || true
  report "$name" "$rec" "$allowed"
  if [ -n "${RECORDS:-}" ]; then mkdir -p "$RECORDS" && cp "$rec" "$RECORDS/"; fi
}

echo "three numbers at $rate msg/s, $rows rows; ceiling case: the server accepts $ceiling msg/s a number"
run "noise (one host)" 1 "$((3 * rate))" --throughput -1 --throttle 0.02
run "ceiling (one host)" 1 "$((3 * ceiling))" --throughput "$ceiling"
if [ -n "$redis_url" ]; then
  hosts=${HOSTS:-2}
  what="$hosts hosts"
  [ "$hosts" = 2 ] && what="two hosts"
  redis-cli -p "$rport" flushall >/dev/null
  run "noise ($what, Redis)" "$hosts" "$((3 * rate))" --throughput -1 --throttle 0.02
  redis-cli -p "$rport" flushall >/dev/null
  run "ceiling ($what, Redis)" "$hosts" "$((3 * ceiling))" --throughput "$ceiling"
else
  echo "two hosts: skipped (redis-server is not installed)"
fi
echo "command: bench/throttle.sh $rows $rate $ceiling"
