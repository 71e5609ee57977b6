#!/usr/bin/env bash
# Concurrency that follows latency (issue 15): ten numbers allowed 80 msg/s
# each, sent with wasend's DEFAULT flags to `wasend sandbox serve --latency
# D`, must reach at least 95 % of 800 msg/s when the server answers in
# 200 ms and 90 % when it answers in 2 s.
#
#   bench/latency.sh [LATENCY] [SECONDS]     # e.g. 200ms, 2s, 200ms±50ms
#   WASEND_BIN=/tmp/wasend-old bench/latency.sh  # another build of wasend sends
#
# It imports 800 × SECONDS recipients (default 30 s worth), sets every tier
# to 80 msg/s with a burst of 10 and a cap out of the way, adds ten
# accounts, and times `wasend campaign run --resume 1` with no other flag.
# The achieved rate is read from the sandbox's own --record: requests it
# accepted, from the first to the last, per second. The sandbox enforces
# 80 msg/s per number itself, so a rate above the allowed one would show as
# throttled answers.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
latency=${1:-200ms}
secs=${2:-30}
accounts=10
rate=80
rows=$((accounts * rate * secs))
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

wasend_bin "$work/wasend"
port=$(freeport)
"$work/wasend" sandbox serve --addr 127.0.0.1:$port --latency "$latency" --record "$work/record.jsonl" 2>"$work/sandbox.log" &
waitport "$port"
recipients "$rows" "$work/list.csv"
export WASEND_DB="$work/wasend.db" WASEND_API_BASE="http://127.0.0.1:$port" WASEND_TOKEN=bench
for tier in new warm active; do "$work/wasend" -q tier set $tier --rate $rate --burst 10 --daily-cap 1000000000; done
for i in $(seq $accounts); do "$work/wasend" -q account add bench-$i --phone-number-id $((200000000000000 + i)) --tier active; done
"$work/wasend" -q campaign import "$work/list.csv" --template wasend_demo --lang en_US --params name

cmd="wasend campaign run --resume 1"
start=$(date +%s.%N)
/usr/bin/time -v "$work/wasend" -q campaign run --resume 1 2>"$work/time.log"
end=$(date +%s.%N)
rss=$(grep 'Maximum resident' "$work/time.log" | grep -o '[0-9]*$')

# "at":"2026-12-01T03:04:05.123456789Z": seconds of the day, a run being
# far shorter than a day.
awk -v want=$((accounts * rate)) -v rows="$rows" -v lat="$latency" -v cmd="$cmd" -v took="$(echo "$end - $start" | bc -l)" -v rss="$rss" '
  function secs(line,   t, h) {
    match(line, /"at":"[^"]*"/); t = substr(line, RSTART + 17, 18)
    h = substr(t, 1, 2) * 3600 + substr(t, 4, 2) * 60 + substr(t, 7)
    if (first != "" && h < first - 43200) h += 86400
    return h
  }
  /"outcome":"accepted"/ { s = secs($0); if (first == "") first = s; last = s; ok++ }
  /"outcome":"throttled"/ { throttled++ }
  END {
    r = (ok - 1) / (last - first)
    printf "latency %s, %d numbers at %d msg/s: %d accepted (of %d), %d throttled, in %.1f s of %.1f s run: %.0f msgs/s = %.1f %% of %d (peak RSS %.0f MiB)\n",
      lat, want / 80, 80, ok, rows, throttled, last - first, took, r, 100 * r / want, want, rss / 1024
    printf "  command: bench/latency.sh %s → %s (default flags) against wasend sandbox serve --latency %s\n", lat, cmd, lat
  }' "$work/record.jsonl"
