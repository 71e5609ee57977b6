#!/usr/bin/env bash
# Several processes on one database (issue 25): how much of the time three
# numbers at 30, 40 and 50 msg/s are used, and how the campaigns share them,
# read from the sandbox's record.
#
#   bench/fairness.sh [ROWS]                      # 600 rows a campaign
#   WASEND_BIN=/tmp/wasend-old bench/fairness.sh  # another build of wasend sends
#   CASES=eight bench/fairness.sh                 # only the cases whose name has "eight"
#
# three: 3 processes, each running its own campaign (equal priority), at once.
# eight: 8 processes, each its own campaign.
# one campaign: 2 processes running the same campaign (2 × ROWS rows).
#
# A number's utilisation is the requests it sent beyond its first burst (one
# second's worth) over its rate × the span (the sandbox's first to last
# request): 1.00 when it sent every token it earned. A campaign's share is its part of the
# requests made while every campaign sends (from the last campaign's first
# request to the first campaign's last), against its weight's part (1/N):
# "+3 %" is 3 % more than its weight.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-600}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT

wasend_bin "$work/wasend"
wasend="$work/wasend"
export WASEND_TOKEN=bench
rates=(30 40 50)

# list K N: N recipients of their own for campaign K.
list() {
  awk -v k="$1" -v n="$2" 'BEGIN { print "phone,name"; for (i = 0; i < n; i++) printf "+49151%02d%06d,P%d\n", k, i, i }' >"$work/list-$1.csv"
}

# report NAME RECORD: each number's utilisation, each campaign's share.
report() {
  python3 - "$1" "$2" "${rates[@]}" <<'EOF'
import json, sys, re
from datetime import datetime
name, path, rates = sys.argv[1], sys.argv[2], [float(r) for r in sys.argv[3:]]
def ts(s):
    s = s.rstrip('Z')
    if '.' in s:
        head, frac = s.split('.')
        s = head + '.' + frac[:6]
    return datetime.fromisoformat(s.replace('+00:00', ''))
recs = [json.loads(l) for l in open(path)]
if not recs:
    print(f"{name}: no requests"); sys.exit()
for r in recs:
    r['t'] = ts(r['at'])
    m = re.match(r'wasend:c(\d+):', r.get('callback_data', ''))
    r['c'] = m.group(1) if m else '?'
t0, t1 = min(r['t'] for r in recs), max(r['t'] for r in recs)
span = (t1 - t0).total_seconds() or 1e-9
nums = sorted({r['phone_number_id'] for r in recs})
util = []
for i, n in enumerate(nums):
    k, rate = sum(r['phone_number_id'] == n for r in recs), rates[i % len(rates)]
    util.append(f"{n[-1]} {max(k - rate, 0)/(rate*span):.2f}")
camps = sorted({r['c'] for r in recs}, key=lambda c: (len(c), c))
first = {c: min(r['t'] for r in recs if r['c'] == c) for c in camps}
last = {c: max(r['t'] for r in recs if r['c'] == c) for c in camps}
a, b = max(first.values()), min(last.values())
both = [r for r in recs if a <= r['t'] <= b]
line = f"{name}: {len(recs)} requests in {span:.1f} s; utilisation by number: {', '.join(util)}"
if len(camps) > 1 and both:
    w = 1 / len(camps)
    devs = [(sum(r['c'] == c for r in both) / len(both)) / w - 1 for c in camps]
    line += (f"; shares while all {len(camps)} send ({(b - a).total_seconds():.1f} s, {len(both)} requests) "
             f"against their weight: {', '.join(f'{100*d:+.0f} %' for d in devs)} (worst {100*max(abs(d) for d in devs):.0f} %)")
print(line)
EOF
}

# run NAME PROCESSES CAMPAIGNS: one sandbox, one database, PROCESSES wasend
# processes; process k runs campaign k mod CAMPAIGNS.
run() {
  local name=$1 procs=$2 camps=$3
  case "$name" in *${CASES:-}*) ;; *) return ;; esac
  local port rec="$work/$name.jsonl" pids=()
  port=$(freeport)
  : >"$rec"
  "$wasend" sandbox serve --addr 127.0.0.1:"$port" --throughput -1 --pair-interval -1s --record "$rec" 2>"$work/$name-sandbox.log" &
  local sandbox=$!
  waitport "$port"
  export WASEND_API_BASE="http://127.0.0.1:$port" WASEND_DB="$work/$name.db"
  for i in 1 2 3; do
    local r=${rates[$((i - 1))]}
    "$wasend" -q account add bench-$i --phone-number-id 10000000000000$i --tier active --throughput unlimited 2>/dev/null
    "$wasend" -q account set bench-$i --rate "$r" --burst "$r" --daily-cap 1000000
  done
  local n=$rows
  [ "$camps" -lt "$procs" ] && n=$((rows * procs / camps))
  for k in $(seq "$camps"); do list "$k" "$n"; done
  # Each campaign imported before any sends, so all start together.
  for k in $(seq "$camps"); do
    "$wasend" -q campaign import "$work/list-$k.csv" --name "c$k" --template wasend_demo --lang en_US --params name >/dev/null
  done
  # A number's bucket fills from its `account set`: wait the second its
  # burst takes to fill, so each starts with the first burst the
  # utilisation counts (a run started at once found half of it).
  sleep 1
  for p in $(seq "$procs"); do
    local k=$(((p - 1) % camps + 1))
    "$wasend" -q campaign run --resume "$k" --log-level error >"$work/$name-$p.out" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || { echo "$name: a wasend process failed:"; cat "$work/$name"-*.out; }; done
  kill "$sandbox" 2>/dev/null || true
  wait "$sandbox" 2>/dev/null || true
  report "$name" "$rec"
}

echo "three numbers at ${rates[*]} msg/s, $rows rows a campaign, one database"
run "three processes, three campaigns" 3 3
run "eight processes, eight campaigns" 8 8
run "two processes, one campaign" 2 1
echo "command: bench/fairness.sh $rows"
