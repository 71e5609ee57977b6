#!/usr/bin/env bash
# Issue 15's first target: `status`, `status --json`, `campaign list` and
# `campaign show` on a database holding a 1,000,000-row campaign with
# 250,000 attempts answer in at most 200 ms, and `status --watch` costs at
# most 5 % of a core. Issue 25's recent case: the same commands, and
# `limits status` when redis-server is installed, in at most 100 ms with
# 1,000,000 recipients in the last 24 h of one portfolio and the 250,000
# attempts in the last four minutes.
#
#   bench/status.sh              # build the databases once, time each command
#   bench/status.sh --rebuild    # build them again
#   WATCH_SECONDS=0 bench/status.sh   # skip the 60 s `status --watch` CPU figures
#   CASES=recent bench/status.sh      # only the recent case (CASES=spread: only issue 15's)
#   CASES=priced bench/status.sh      # the recent case with a rate card and priced statuses
#   BIN=/path/wasend OUT=dir bench/status.sh   # another build (its own databases in dir)
#
# The import is kept in bench/out/status-import.db (ignored by git) and
# reused: building it takes a minute. It is a real import of
# bench/import.sh's 1M-row file through `wasend campaign import`.
#
# The spread case (bench/out/status-1m.db, kept) adds one SQL transaction
# that plays the sending of the first 220,000 rows over the four hours
# before it was built: 250,000 attempts on three accounts (30,000 rows
# tried twice, 10,000 of those throttled first), 200,000 sent, 5,000
# failed, 1,000 unknown, 14,000 waiting for a retry time. A database built
# by an older wasend is upgraded by the first command that opens it.
#
# The recent case (bench/out/status-recent.db, built again at each run
# from the import, so its window is now) plays the same attempts 1 ms
# apart, ending now, puts the three accounts in one portfolio and logs a
# send to each of the 1,000,000 recipients in the last 24 h: the 220,000
# tried at their attempt, the rest spread over the day.
#
# The priced case (bench/out/status-priced.db) is the recent case with a
# rate card imported, the template's category synced (marketing) and a
# delivered status with pricing for each of the 200,000 sent rows (every
# tenth free_entry_point): status, show and list then price the campaign,
# its estimate and its actual cost (issue 28).
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=1

out=${OUT:-bench/out}
base=$out/status-import.db
mkdir -p "$out"
redis_dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$redis_dir"' EXIT
bin=${BIN:-$redis_dir/wasend}
[[ -n ${BIN:-} ]] || go build -o "$bin" .

if [[ ${1:-} == --rebuild ]]; then
  rm -f "$base" "$out"/status-1m.db* "$out"/status-recent.db*
fi
if [[ ! -f $base ]]; then
  echo "== building $base (once)"
  awk -v n=1000000 'BEGIN {
    srand(4)
    print "phone,name,code,city"
    for (i = 0; i < n; i++) {
      d = sprintf("%08d", 10000000 + int(rand() * 90000000))
      printf "+49151%s,Person %d,C%06d,Berlin\n", d, i, i
    }
  }' >"$out/status-1m.csv"
  for a in 1 2 3; do
    "$bin" --db "$base" account add "acct-$a" --phone-number-id "10000$a" --tier active >/dev/null
  done
  "$bin" --db "$base" -q campaign import "$out/status-1m.csv" --template spring_sale --lang en_US \
    --params name,code,city >/dev/null
  rm -f "$out/status-1m.csv"
fi

play() { # the SQL that plays 250,000 attempts $1 ns apart, the last one now
  local spacing=$1 now
  now=$(date +%s%N)
  cat <<SQL
PRAGMA foreign_keys = ON;
BEGIN;
-- Attempt i (1-based) of 250,000 is claimed at t0 + i * spacing, so the
-- last one is claimed as the database is built. Rows 1..30,000 are tried
-- twice: first throttled (10,000) or a transient error, then sent.
CREATE TEMP TABLE plan AS
  WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 250000)
  SELECT i,
    CASE WHEN i <= 30000 THEN i ELSE i - 30000 END AS msg,
    1 + (i % 3) AS account
  FROM k;
INSERT INTO attempts (message_id, account_id, claimed_at, done_at, outcome, error_code, class)
  SELECT p.msg + (SELECT min(id) - 1 FROM messages), p.account,
    $now - (250000 - p.i) * $spacing, $now - (250000 - p.i) * $spacing + 150000000,
    CASE WHEN p.i <= 30000 THEN 'retry'
         WHEN p.msg BETWEEN 200001 AND 205000 THEN 'failed'
         WHEN p.msg BETWEEN 205001 AND 206000 THEN 'unknown'
         WHEN p.msg > 206000 THEN 'retry'
         ELSE 'sent' END,
    CASE WHEN p.i <= 10000 THEN 130429 WHEN p.i <= 30000 THEN 131000
         WHEN p.msg BETWEEN 200001 AND 205000 THEN 131026 END,
    CASE WHEN p.i <= 10000 THEN 'throttled' WHEN p.i <= 30000 THEN 'transient'
         WHEN p.msg BETWEEN 200001 AND 205000 THEN 'permanent'
         WHEN p.msg BETWEEN 205001 AND 206000 THEN 'ambiguous'
         WHEN p.msg > 206000 THEN 'transient' ELSE 'sent' END
  FROM plan p ORDER BY p.i;
UPDATE messages SET
    attempts = CASE WHEN id - b.base <= 30000 THEN 2 ELSE 1 END,
    account_id = 1 + ((id - b.base + 30000) % 3),
    updated_at = $now,
    state = CASE WHEN id - b.base <= 200000 THEN 'sent' WHEN id - b.base <= 205000 THEN 'failed'
                 WHEN id - b.base <= 206000 THEN 'unknown' ELSE 'pending' END,
    wamid = CASE WHEN id - b.base <= 200000 THEN 'wamid.' || id END,
    sent_at = CASE WHEN id - b.base <= 200000 THEN $now END,
    error_code = CASE WHEN id - b.base BETWEEN 200001 AND 205000 THEN 131026 END,
    error_message = CASE WHEN id - b.base BETWEEN 200001 AND 205000 THEN 'Message undeliverable' END,
    retries = CASE WHEN id - b.base > 206000 THEN 1 ELSE 0 END,
    next_attempt_at = CASE WHEN id - b.base > 206000 THEN $now + 3600000000000 ELSE 0 END
  FROM (SELECT min(id) - 1 AS base FROM messages) AS b
  WHERE id - b.base <= 220000;
$2
COMMIT;
SQL
}

# The recent case's portfolio and send log: every recipient messaged in
# the last 24 h, the 220,000 tried at their latest attempt.
recent_sql='
INSERT INTO portfolios (name, margin, created_at) VALUES ('"'"'big'"'"', 0.05, 0);
UPDATE accounts SET portfolio_id = (SELECT id FROM portfolios WHERE name = '"'"'big'"'"');
INSERT INTO contact_log (phone, account_id, last_at, sent_at)
  SELECT m.phone, 1 + ((m.id - b.base + 30000) % 3),
    coalesce((SELECT max(claimed_at) FROM attempts t WHERE t.message_id = m.id), n.now - (m.id - b.base) * 86000000),
    CASE WHEN m.state = '"'"'sent'"'"' THEN n.now ELSE 0 END
  FROM messages m, (SELECT min(id) - 1 AS base FROM messages) AS b, (SELECT max(claimed_at) AS now FROM attempts) AS n
  WHERE true ON CONFLICT DO UPDATE SET last_at = max(last_at, excluded.last_at);'

# The priced case's template category and statuses (the card is imported
# after, by the command).
priced_sql='
INSERT INTO templates (waba_id, name, language, status, category, synced_at)
  VALUES ('"'"'100001'"'"', '"'"'spring_sale'"'"', '"'"'en_US'"'"', '"'"'APPROVED'"'"', '"'"'MARKETING'"'"', 0);
INSERT INTO message_statuses (wamid, status, at, message_id, pricing, pricing_type, billable, received_at)
  SELECT wamid, '"'"'delivered'"'"', n.now, id, '"'"'marketing'"'"',
    CASE WHEN id % 10 = 0 THEN '"'"'free_entry_point'"'"' ELSE '"'"'regular'"'"' END, 1, n.now
  FROM messages, (SELECT max(claimed_at) AS now FROM attempts) AS n WHERE state = '"'"'sent'"'"';'

build() { # db, spacing (ns), extra SQL
  echo "== building $1"
  rm -f "$1" "$1-wal" "$1-shm"
  cp "$base" "$1"
  play "$2" "$3" | sqlite3 "$1"
}

time_cmd() { # label, args… — best and median of 5 runs, wall clock
  local label=$1
  shift
  local ms=()
  for _ in 1 2 3 4 5; do
    local s
    s=$(date +%s%N)
    # Warnings (a fresh Redis holds no state) are not the figure; an
    # error is shown and ends the run.
    if ! "$bin" --db "$db" "$@" >/dev/null 2>"$redis_dir/stderr"; then
      cat "$redis_dir/stderr" >&2
      exit 1
    fi
    ms+=($(( ($(date +%s%N) - s) / 1000000 )))
  done
  local sorted
  sorted=$(printf '%s\n' "${ms[@]}" | sort -n | tr '\n' ' ')
  echo "FIGURES $label: best=$(echo "$sorted" | cut -d' ' -f1) ms median=$(echo "$sorted" | cut -d' ' -f3) ms  (wasend --db $db $*)"
}

watch_cpu() { # db, args…: CPU of `status --watch` (every 2 s) over $secs s
  local d=$1
  shift
  "$bin" --db "$d" status --watch "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep 1
  ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
  local t0 t1
  t0=$(ticks)
  sleep "$secs"
  t1=$(ticks)
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  local hz
  hz=$(getconf CLK_TCK)
  echo "FIGURES status --watch: $(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$secs" 'BEGIN {printf "%.1f", 100 * d / hz / s}') % of a core over $secs s (wasend --db $d status --watch $*)"
}

secs=${WATCH_SECONDS:-60}
cases=${CASES:-spread recent}
for case in $cases; do
  case $case in
  spread)
    db=$out/status-1m.db
    [[ -f $db ]] || build "$db" 57600000 ""
    ;;
  recent)
    db=$out/status-recent.db
    build "$db" 1000000 "$recent_sql"
    ;;
  priced)
    db=$out/status-priced.db
    build "$db" 1000000 "$recent_sql$priced_sql"
    printf 'Market,Currency,Marketing,Utility,Authentication\nGermany,USD,0.1365,0.0550,0.0768\nOther,USD,0.0741,0.0080,0.0300\n' \
      >"$redis_dir/card.csv"
    "$bin" --db "$db" pricing import "$redis_dir/card.csv" --effective 2025-07-01 >/dev/null
    ;;
  *) echo "CASES: spread, recent or priced, not $case" >&2; exit 2 ;;
  esac
  echo "== $case: $db: $(du -h "$db" | cut -f1)"
  # The first open after an upgrade migrates; time that apart.
  start=$(date +%s%N)
  "$bin" --db "$db" campaign list --json >/dev/null
  echo "FIGURES first open (migrations, if any): $(( ($(date +%s%N) - start) / 1000000 )) ms"
  time_cmd status status
  time_cmd "status --json" status --json
  time_cmd "campaign list" campaign list
  time_cmd "campaign show" campaign show 1
  time_cmd "portfolio list" portfolio list
  if [[ $case != spread ]] && command -v redis-server >/dev/null; then
    rport=$((20000 + RANDOM % 20000))
    redis-server --port "$rport" --save '' --appendonly no --dir "$redis_dir" >/dev/null &
    rpid=$!
    for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$rport) 2>/dev/null && break; sleep 0.1; done
    time_cmd "limits status" limits status --limits "redis://127.0.0.1:$rport/0"
    kill "$rpid"
  fi
  if (( secs > 0 )); then
    watch_cpu "$db"
  fi
done
