#!/usr/bin/env bash
# Issue 25's webhook target: the receiver sustains ≥ 5,000 signed posts/s
# with p99 ≤ 50 ms and the inbox applied with ≤ 5 s lag, while a campaign
# sends. Meta posts up to three statuses per message (sent, delivered,
# read), one body each.
#
#   bench/webhook.sh [MESSAGES] [POSTS_PER_S] [SEND_PER_S]   # 30,000 messages (90,000 posts), 5,000/s, 1,000 msg/s
#   PROFILE=/tmp/hook.cpu bench/webhook.sh                   # with a CPU profile of the receiver
#   LOADPROFILE=/tmp/load.cpu bench/webhook.sh               # with a CPU profile of the load generator
#   WASEND_BIN=/tmp/wasend-old bench/webhook.sh              # another build of wasend receives
#   RECEIVER=run bench/webhook.sh                            # the receiver inside `campaign run --webhook-addr`
#   TRACE=/tmp/trace bench/webhook.sh                        # slow writes and groups (WASEND_TRACE_SLOW, default 20ms) and gctrace of
#                                                            # the receiver and the sender, kept in /tmp/trace/{serve,run}.log, and
#                                                            # their counts: the receiver's slow groups and waits, slow applier bodies
#
# Once (kept in bench/out/webhook-MESSAGES.db, ignored by git): a campaign of
# MESSAGES rows is sent to the sandbox, so the statuses are about real sent
# rows. At each run a copy of it gets `wasend webhook serve` (or, with
# RECEIVER=run, the receiver of the campaign run below), and a second
# campaign sends through the same database at SEND_PER_S while
# bench/webhookload posts the first campaign's statuses, signed, open loop
# at POSTS_PER_S. Printed: the offered and answered rate, the answer
# times, how many posts left more than 10 ms after due (every connection
# busy: the receiver is behind; or the generator itself late) and the
# generator's CPU per post, how long bodies waited in the inbox before they were applied
# (applied_at − received_at, both on the receiver's clock; read with the
# sqlite3 command-line shell), the
# receiver's CPU per post (user + system of its process; with RECEIVER=run
# the sender's CPU is in it too), and the load average around the run (the
# machine may be shared: read the CPU figures first).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export CGO_ENABLED=1
msgs=${1:-30000}
rate=${2:-5000}
send=${3:-1000}
receiver=${RECEIVER:-serve}
out=bench/out
base=$out/webhook-$msgs.db
mkdir -p "$out"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${TRACE:-}" ] && mkdir -p "$TRACE" && cp "$work"/{serve,run}.log "$TRACE"/ 2>/dev/null; rm -rf "$work"' EXIT
wasend_bin "$work/wasend"
go build -o "$work/webhookload" ./bench/webhookload
w="$work/wasend"
hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
listening() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }
list() { awk -v n="$2" -v o="$3" 'BEGIN { print "phone,name"; for (i = 0; i < n; i++) printf "+49151%08d,P%d\n", o + i, i }' >"$1"; }

sport=$((20000 + RANDOM % 20000))
"$w" sandbox serve --addr 127.0.0.1:$sport --throughput -1 --pair-interval -1s 2>"$work/sandbox.log" &
listening $sport
export WASEND_API_BASE="http://127.0.0.1:$sport" WASEND_TOKEN=bench
export WASEND_APP_SECRET=bench-app-secret WASEND_VERIFY_TOKEN=bench-verify

if [[ ! -f $base ]]; then
  echo "== sending campaign 1 ($msgs rows) into $base (once)"
  list "$work/first.csv" "$msgs" 10000000
  for tier in new warm active; do "$w" --db "$base" -q tier set $tier --rate 1000000 --burst 1000000 --daily-cap 1000000000; done
  for i in 1 2 3; do "$w" --db "$base" -q account add bench-$i --phone-number-id 10000000000000$i --tier active --throughput unlimited 2>/dev/null; done
  "$w" --db "$base" -q campaign run "$work/first.csv" --template wasend_demo --lang en_US --params name --log-level error
fi
db="$work/wasend.db"
cp "$base" "$db"
export WASEND_DB="$db"
# Campaign 2 sends at SEND_PER_S over three numbers for longer than the posting takes.
per=$(( (send + 2) / 3 ))
"$w" -q tier set active --rate "$per" --burst "$per" --daily-cap 1000000000
second=$(( send * (msgs * 3 / rate + 30) ))
list "$work/second.csv" "$second" 50000000

hport=$((20000 + RANDOM % 20000))
[ -n "${TRACE:-}" ] && export WASEND_TRACE_SLOW=${WASEND_TRACE_SLOW:-20ms} GODEBUG=gctrace=1
[ -n "${PROFILE:-}" ] && export WASEND_CPUPROFILE="$(realpath -m "$PROFILE")"
case "$receiver" in
serve)
  "$w" webhook serve --addr 127.0.0.1:$hport --log-level error 2>"$work/serve.log" &
  hook=$!
  unset WASEND_CPUPROFILE
  "$w" -q campaign run "$work/second.csv" --template wasend_demo --lang en_US --params name --log-level error 2>"$work/run.log" &
  sender=$!
  ;;
run)
  "$w" -q campaign run "$work/second.csv" --template wasend_demo --lang en_US --params name --log-level error \
    --webhook-addr 127.0.0.1:$hport 2>"$work/run.log" &
  hook=$! sender=$!
  unset WASEND_CPUPROFILE
  ;;
*) echo "RECEIVER=$receiver: want serve or run" >&2; exit 2 ;;
esac
listening $hport
sleep 2 # the sender past its start
sqlite3 "$db" "SELECT m.id, m.wamid, m.phone, a.phone_number_id FROM messages m JOIN accounts a ON a.id = m.account_id
  WHERE m.campaign_id = 1 AND m.state = 'sent' ORDER BY m.id" >"$work/rows"
first=$(sqlite3 "$db" 'SELECT coalesce(max(id), 0) FROM webhook_inbox')
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(ticks $hook)
sent0=$("$w" campaign list --json | grep -o '"sent": [0-9]*' | tail -1 | grep -o '[0-9]*$')
start=$(date +%s.%N)
"$work/webhookload" -url "http://127.0.0.1:$hport/webhook" -rows "$work/rows" -campaign 1 -rate "$rate" \
  ${LOADPROFILE:+-cpuprofile "$(realpath -m "$LOADPROFILE")"} | tee "$work/load.out"
answered=$(date +%s.%N)
# The applier's lag: every body stored since the start, applied.
for _ in $(seq 600); do
  [ "$(sqlite3 "$db" "SELECT count(*) FROM webhook_inbox WHERE id > $first AND applied_at IS NULL")" = 0 ] && break
  sleep 0.1
done
end=$(date +%s.%N)
k=$(sqlite3 "$db" "SELECT count(*) FROM webhook_inbox WHERE id > $first")
left=$(sqlite3 "$db" "SELECT count(*) FROM webhook_inbox WHERE id > $first AND applied_at IS NULL")
lag() { sqlite3 "$db" "SELECT (applied_at - received_at) / 1e6 FROM webhook_inbox WHERE id > $first ORDER BY 1 LIMIT 1 OFFSET $1"; }
printf 'inbox lag (stored → applied) of %d bodies: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d not applied\n' \
  "$k" "$(lag $((k / 2)))" "$(lag $((k * 99 / 100)))" "$(lag $((k - 1)))" "$left"
printf 'all applied %.1f s after the last answer\n' "$(echo "$end - $answered" | bc -l)"
sqlite3 "$db" "SELECT 'campaign 1: ' || count(delivered_at) || ' rows delivered, ' || count(read_at) || ' read' FROM messages WHERE campaign_id = 1"
t1=$(ticks $hook)
sent1=$("$w" campaign list --json | grep -o '"sent": [0-9]*' | tail -1 | grep -o '[0-9]*$')
load1=$(cut -d' ' -f1-3 /proc/loadavg)
posts=$(grep -o '^posted [0-9]*' "$work/load.out" | grep -o '[0-9]*$')
printf 'receiver (%s): %.0f µs of CPU per post (%.2f cores over %.1f s)\n' "$receiver" \
  "$(echo "($t1 - $t0) * 1000000 / $hz / $posts" | bc -l)" "$(echo "($t1 - $t0) / $hz / ($end - $start)" | bc -l)" "$(echo "$end - $start" | bc -l)"
printf 'campaign 2 meanwhile: %d messages sent, %.0f msg/s (asked %d)\n' "$((sent1 - sent0))" "$(echo "($sent1 - $sent0) / ($end - $start)" | bc -l)" "$send"
echo "load average: $load0 before, $load1 after ($(nproc) cores)"
echo "command: RECEIVER=$receiver bench/webhook.sh $msgs $rate $send"
kill -INT $sender 2>/dev/null || true
[ "$hook" != "$sender" ] && kill -TERM $hook 2>/dev/null || true
wait $hook 2>/dev/null || true
if [ -n "${TRACE:-}" ]; then
  # What the trace counted (ms of a field such as took=1.5ms, mutex=20µs, 1.2s).
  ms() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { v = substr($i, length(k) + 2)
    if (v ~ /µs$/) v = 0; else if (v ~ /ms$/) v = substr(v, 1, length(v) - 2) + 0; else v = substr(v, 1, length(v) - 1) * 1000; print v } }'; }
  atleast() { awk -v t="$1" '$1 >= t { n++ } END { print n + 0 }'; }
  log=$work/serve.log
  [ "$receiver" = run ] && log=$work/run.log
  groups=$(grep 'webhook group' "$log" | ms took || true)
  mine=$(grep -E 'by=(webhook\.\(\*Receiver\)\.Run|store\.\(\*Store\)\.AddToInbox) ' "$log" || true) # the receiver's commits (older builds: AddToInbox)
  waits=$(echo "$mine" | ms mutex)
  printf 'trace: receiver groups ≥ 20 ms %d, ≥ 50 ms %d; of its commits, waits for the write mutex ≥ 20 ms %d, ≥ 50 ms %d; %d with 5 or more tries behind another process; %d applier bodies ≥ %s\n' \
    "$(echo "$groups" | atleast 20)" "$(echo "$groups" | atleast 50)" "$(echo "$waits" | atleast 20)" "$(echo "$waits" | atleast 50)" \
    "$(echo "$mine" | grep -cE 'tries=([5-9]|[0-9]{2,}) ' || true)" "$(grep -c 'applier body' "$log" || true)" "$WASEND_TRACE_SLOW"
fi
