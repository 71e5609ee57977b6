#!/usr/bin/env bash
# Throughput: the raw loopback ceiling of the sandbox (a minimal client, 8
# workers, no database) against wasend sending a campaign with unlimited
# tiers to the same sandbox, every claim and outcome committed to SQLite.
#
#   bench/throughput.sh [ROWS] [SECONDS_FOR_CEILING] [RUNS]   # 20,000 rows, 10 s, 1 run
#   PROFILE=/tmp/run.cpu bench/throughput.sh                  # with a CPU profile of wasend
#   WASEND_BIN=/tmp/wasend-old bench/throughput.sh            # another build of wasend sends
#   SERVER=minimal bench/throughput.sh                         # against bench/minimal, not the sandbox
#
# wasend runs as users run it: `campaign run FILE` on a fresh database, the
# import included in the time, default flags (WORKERS=N adds --workers N).
#
# On a shared machine the ceiling itself drifts by 10-20 % from minute to
# minute, so each run measures it twice, before and after wasend sends, and
# takes the ratio against their mean. It also prints wasend's CPU per
# message against the ceiling client's CPU per request (the client's share
# of the same exchange, without a database). SERVER=minimal sends to
# bench/minimal (decodes the body, answers a message id) instead of the
# sandbox, to tell the server's cost from the client's. With RUNS > 1 every run starts from a
# fresh database and the last lines give the median and the spread (lowest
# and highest) of the ratio, the rate and the CPU per message.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-20000}
secs=${2:-10}
runs=${3:-1}
workers=${WORKERS:-}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

wasend_bin "$work/wasend"
go build -o "$work/ceiling" ./bench/ceiling
port=$(freeport)
server=${SERVER:-sandbox}
start_server "$work/wasend" "$work" "$port" "$server"
sandbox=$server_pid
# CPU time (user + system, in clock ticks) the sandbox has used so far: its
# share per message tells what the server costs wasend's requests.
sandbox_ticks() { awk '{ print $14 + $15 }' "/proc/$sandbox/stat"; }
hz=$(getconf CLK_TCK)

ceiling() { # prints req/s; the CPU per request of both sides to stderr
  local t0 r
  t0=$(sandbox_ticks)
  r=$(/usr/bin/time -o "$work/ctime" -f '%U %S' \
    "$work/ceiling" -url "http://127.0.0.1:$port/v25.0/100000000000001/messages" -workers 8 -duration "${secs}s")
  read -r cu cs <"$work/ctime"
  r=$(echo "$r" | sed -E 's/.*: ([0-9]+) accepted.*: ([0-9]+) req\/s/\1 \2/')
  set -- $r
  echo "($cu + $cs) * 1000000 / $1" | bc -l >>"$work/client_cpu"
  printf 'ceiling: %s req/s; CPU per request: client %.0f µs, %s %.0f µs\n' "$2" \
    "$(echo "($cu + $cs) * 1000000 / $1" | bc -l)" "$server" "$(echo "($(sandbox_ticks) - $t0) * 1000000 / $hz / $1" | bc -l)" >&2
  echo "$2"
}

recipients "$rows" "$work/list.csv"
export WASEND_API_BASE="http://127.0.0.1:$port" WASEND_TOKEN=bench
flags=()
[ -n "$workers" ] && flags=(--workers "$workers")
cmd="wasend campaign run list.csv --template wasend_demo --lang en_US --params name ${flags[*]:-}"
: >"$work/figures"
for run in $(seq "$runs"); do
  before=$(ceiling)
  export WASEND_DB="$work/wasend-$run.db"
  unlimited "$work/wasend"
  # The figure is messages imported, sent and durably recorded per second.
  # PROFILE=FILE writes a CPU profile of the wasend process (go tool pprof).
  [ -n "${PROFILE:-}" ] && export WASEND_CPUPROFILE="$(realpath -m "$PROFILE")"
  sb_before=$(sandbox_ticks)
  start=$(date +%s.%N)
  /usr/bin/time -o "$work/time" -f '%U %S %M' \
    "$work/wasend" -q campaign run "$work/list.csv" --template wasend_demo --lang en_US --params name ${flags[@]+"${flags[@]}"} --log-level error
  end=$(date +%s.%N)
  sb_after=$(sandbox_ticks)
  unset WASEND_CPUPROFILE
  sent=$("$work/wasend" campaign list --json | grep -o '"sent": [0-9]*' | head -1 | grep -o '[0-9]*$')
  after=$(ceiling)

  rate=$(echo "$sent / ($end - $start)" | bc -l)
  mean=$(echo "($before + $after) / 2" | bc -l)
  read -r user sys rss <"$work/time"
  cpu=$(echo "($user + $sys) * 1000000 / $sent" | bc -l)
  sbcpu=$(echo "($sb_after - $sb_before) * 1000000 / $hz / $sent" | bc -l)
  ratio=$(echo "$rate / $mean" | bc -l)
  client=$(tail -2 "$work/client_cpu" | awk '{ s += $1 } END { print s / NR }')
  printf 'wasend: %d imported and sent in %.1f s: %.0f msgs/s, %.0f µs of CPU per message (the %s: %.0f µs), peak RSS %.0f MiB\n  command: %s\n' \
    "$sent" "$(echo "$end - $start" | bc -l)" "$rate" "$cpu" "$server" "$sbcpu" "$(echo "$rss / 1024" | bc -l)" "$cmd"
  printf 'CPU per message: wasend %.0f µs, %.1f× the ceiling client'"'"'s %.0f µs per request (the mean of before and after)\n' \
    "$cpu" "$(echo "$cpu / $client" | bc -l)" "$client"
  printf 'ratio: %.2f of the loopback ceiling against the %s (%.0f req/s, the mean of %s before and %s after)\n  command: SERVER=%s bench/throughput.sh %s %s (ceiling: bench/ceiling -workers 8 -duration %ss)\n' \
    "$ratio" "$server" "$mean" "$before" "$after" "$server" "$rows" "$secs" "$secs"
  printf '%.4f %.0f %.0f %.2f\n' "$ratio" "$rate" "$cpu" "$(echo "$cpu / $client" | bc -l)" >>"$work/figures"
  rm -f "$work/wasend-$run.db"*
done
if [ "$runs" -gt 1 ]; then
  # median (middle value, or the mean of the two middle ones) and spread
  stat() { sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf fmt, m, v[1], v[NR] }' fmt="$1"; }
  printf 'over %d runs against the %s (median, lowest-highest): ratio %s of the ceiling, %s msgs/s, %s µs of CPU per message, %s× the ceiling client'"'"'s\n  command: SERVER=%s bench/throughput.sh %s %s %s\n' "$runs" "$server" \
    "$(cut -d' ' -f1 "$work/figures" | stat '%.2f (%.2f-%.2f)')" \
    "$(cut -d' ' -f2 "$work/figures" | stat '%.0f (%.0f-%.0f)')" \
    "$(cut -d' ' -f3 "$work/figures" | stat '%.0f (%.0f-%.0f)')" \
    "$(cut -d' ' -f4 "$work/figures" | stat '%.1f (%.1f-%.1f)')" "$server" "$rows" "$secs" "$runs"
fi
