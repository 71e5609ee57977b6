#!/usr/bin/env bash
# WAL pages: what wasend's commits write to SQLite while a campaign sends,
# counted in WAL frames (one page each, two pwrite calls) per message and
# by B-tree (table or index). A count, not a time: it holds on a loaded
# machine, and tells which tables and indexes the store's write path
# rewrites (issue 25).
#
#   bench/walpages.sh [ROWS]                  # 20,000 rows against bench/minimal
#   SERVER=sandbox bench/walpages.sh          # against the sandbox
#   WASEND_BIN=/tmp/wasend-old bench/walpages.sh
#
# A read transaction held open from before the run keeps every frame in
# the WAL (no checkpoint can reset it); the WAL and the database are
# copied before wasend's last connection would checkpoint them away, and
# bench/walpages.py reads them. Without checkpoints the run writes less
# than usual (a checkpoint copies each page back once more), so the
# figure is the commits' share only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-20000}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

wasend_bin "$work/wasend"
port=$(freeport)
start_server "$work/wasend" "$work" "$port" "${SERVER:-minimal}"
recipients "$rows" "$work/list.csv"
export WASEND_API_BASE="http://127.0.0.1:$port" WASEND_TOKEN=bench WASEND_DB="$work/w.db"
unlimited "$work/wasend"

# The pin: a reader whose snapshot predates the run, until its stdin closes.
mkfifo "$work/pin"
python3 -c '
import sqlite3, sys
w = sqlite3.connect(sys.argv[1], isolation_level=None)
w.execute("PRAGMA user_version = 0")  # a frame in the WAL: a snapshot of it pins every frame after
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN")
c.execute("SELECT count(*) FROM sqlite_schema").fetchall()
print("pinned", flush=True)
sys.stdin.read()
' "$work/w.db" <"$work/pin" >"$work/pinned" &
exec 3>"$work/pin"
for _ in $(seq 100); do grep -q pinned "$work/pinned" 2>/dev/null && break; sleep 0.1; done

"$work/wasend" -q campaign run "$work/list.csv" --template wasend_demo --lang en_US --params name --log-level error
cp "$work/w.db" "$work/copy.db"
cp "$work/w.db-wal" "$work/copy.db-wal"
exec 3>&-
sent=$("$work/wasend" campaign list --json | grep -o '"sent": [0-9]*' | head -1 | grep -o '[0-9]*$')
python3 bench/walpages.py "$work/copy.db" "$work/copy.db-wal" "$sent"
echo "  command: SERVER=${SERVER:-minimal} bench/walpages.sh $rows"
