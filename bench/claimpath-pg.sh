#!/usr/bin/env bash
# The claim path's writes alone, on Postgres, in one session: the server
# backend's CPU a row (user + system, from /proc: run it on the server's
# machine). Each claim of 128 pending rows of campaign CAMPAIGN is what
# Take and LogContacts write (one claim UPDATE per number of three, the
# attempts, the send log), then Start's mark, then recordSent's three
# statements, each in its own transaction as the hosts make them. It
# consumes the rows: run it on a copy (CREATE DATABASE run TEMPLATE …) of a
# database that `wasend campaign import` filled, with three numbers (ids
# 1–3: bench/lib.sh's unlimited), to compare schemas (A/B: two templates
# interleaved). Load-robust where claims/s are not: the statements and
# rows are fixed.
#
#   bench/claimpath-pg.sh "host=/tmp/pg port=5432 dbname=run" [CAMPAIGN] [CLAIMS]
set -euo pipefail
conn=$1
c=${2:-1}
n=${3:-150}
{
  echo '\set QUIET on'
  echo 'SELECT pg_backend_pid() AS pid \gset'
  echo '\setenv PID :pid'
  echo 'CREATE TEMP TABLE ids (id bigint, phone text);'
  # A heartbeat's kind of statement first, as on a host's connections.
  echo 'UPDATE messages SET lease_until = lease_until WHERE id = -1;'
  echo '\! awk "{ print \"cpu0\", \$14 + \$15 }" /proc/$PID/stat'
  for i in $(seq "$n"); do
    echo "TRUNCATE ids; INSERT INTO ids SELECT id, phone FROM messages WHERE campaign_id = $c AND state = 'pending'
      AND next_attempt_at <= 0 ORDER BY next_attempt_at, id LIMIT 128;"
    echo 'BEGIN;'
    for a in 1 2 3; do
      echo "UPDATE messages SET state = 'sending', attempts = attempts + 1, account_id = $a, runner_id = 'r', quota_epoch = 0,
        updated_at = $i, lease_until = 2, started = 0, window_wait = 0
        WHERE state = 'pending' AND id = ANY(ARRAY(SELECT id FROM ids WHERE id % 3 = $((a - 1))));"
    done
    echo "INSERT INTO attempts (message_id, account_id, claimed_at) SELECT id, id % 3 + 1, $i::bigint * 1000000000 FROM ids;
      INSERT INTO contact_log (account_id, phone, last_at) SELECT id % 3 + 1, phone, $i FROM ids
        ON CONFLICT (phone, account_id) DO UPDATE SET prev_at = contact_log.last_at, last_at = excluded.last_at
        WHERE excluded.last_at > contact_log.last_at;
      COMMIT;
      UPDATE messages SET started = 1 WHERE id IN (SELECT id FROM ids) AND started = 0;
      BEGIN;
      UPDATE messages SET state = 'sent', wamid = 'w' || id, sent_at = $i, updated_at = $i, error_code = NULL, error_message = NULL
        WHERE id IN (SELECT id FROM ids) AND state IN ('sending', 'unknown');
      UPDATE attempts SET done_at = $i, outcome = 'sent', error_code = NULL, class = 'x'
        WHERE message_id IN (SELECT id FROM ids) AND done_at IS NULL;
      UPDATE contact_log SET sent_at = $i FROM ids WHERE contact_log.account_id = ids.id % 3 + 1 AND contact_log.phone = ids.phone;
      COMMIT;"
  done
  echo '\! awk "{ print \"cpu1\", \$14 + \$15 }" /proc/$PID/stat'
} | psql -X "$conn" -v ON_ERROR_STOP=1 -f - | awk -v rows=$((n * 128)) -v hz="$(getconf CLK_TCK)" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
  /^cpu0/ { a = $2 } /^cpu1/ { b = $2 }
  END { printf "%d rows: the backend %.1f µs of CPU a row (load %s)\n", rows, (b - a) * 1000000 / hz / rows, load }'
