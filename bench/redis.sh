#!/usr/bin/env bash
# Admissions per second through the Redis limits gate on loopback (issue 14),
# beside redis-benchmark's figure for EVALSHA of the same admission script
# (three accounts and the global bucket, limits too high to refuse, a new
# claim id per call; -r draws them at random, so a few repeat and count once),
# then the same naming a new recipient under a reach, a pair gap and
# stickiness, and of a script that only returns: the ceiling a Lua
# admission can reach on this machine.
#   bench/redis.sh [N]   (N admissions per figure, default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)"; exit 1; }

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

echo "== wasend's gate (go-redis, EVALSHA, one admission per call)"
go test -run '^$' -bench Admit -benchtime "${n}x" ./internal/limits/redisgate/ | grep -E 'Benchmark|ok'

p='wasend:{p:rb}:'
sha=$(redis-cli -p "$port" script load "$(cat internal/limits/redisgate/admit.lua)")
noop=$(redis-cli -p "$port" script load "return 1")
redis-cli -p "$port" set "${p}gen" bench >/dev/null
for a in a b c; do redis-cli -p "$port" set "${p}day:$a" '2026-03-02#1' >/dev/null; done
keys=("${p}gen" "${p}claim:__rand_int__" "${p}global" "${p}reach" "${p}rcpt:")
args=("" 1 1e9 1000000000 2026-03-02 172800 3 "" -1 0 0 86400000 86400000000 bench)
# With a recipient: reach 10^9 (allowed 950,000,000), pair gap 60 s, sticky 30 days.
rkeys=("${p}gen" "${p}claim:__rand_int__" "${p}global" "${p}reach" "${p}rcpt:__rand_int__")
rargs=("" 1 1e9 1000000000 2026-03-02 172800 3 "+__rand_int__" 950000000 60000000 2592000000000 2592000000 86400000000 bench)
for a in a b c; do
  keys+=("${p}bucket:$a" "${p}day:$a" "${p}used:$a:2026-03-02#1")
  args+=("$a" 1e9 1000000000 1000000000000 0 '2026-03-02#1')
  rkeys+=("${p}bucket:$a" "${p}day:$a" "${p}used:$a:2026-03-02#1")
  rargs+=("$a" 1e9 1000000000 1000000000000 0 '2026-03-02#1')
done
for c in 1 4 16; do
  echo "== redis-benchmark, $c clients"
  redis-benchmark -p "$port" -n "$n" -c "$c" -r 1000000000 -q evalsha "$sha" "${#keys[@]}" "${keys[@]}" "${args[@]}" | tr '\r' '\n' | grep -v '^$' | tail -1 | sed 's/.*: \([0-9.]* requests per second\).*/admission script: \1/'
  redis-benchmark -p "$port" -n "$n" -c "$c" -r 1000000000 -q evalsha "$sha" "${#rkeys[@]}" "${rkeys[@]}" "${rargs[@]}" | tr '\r' '\n' | grep -v '^$' | tail -1 | sed 's/.*: \([0-9.]* requests per second\).*/with a recipient: \1/'
  redis-benchmark -p "$port" -n "$n" -c "$c" -q evalsha "$noop" 0 | tr '\r' '\n' | grep -v '^$' | tail -1 | sed 's/.*: \([0-9.]* requests per second\).*/return 1:         \1/'
done
used=$(redis-cli -p "$port" mget "${p}used:a:2026-03-02#1" "${p}used:b:2026-03-02#1" "${p}used:c:2026-03-02#1" | awk '{s += $1} END {print s}')
echo "redis-benchmark admissions counted: $used (of $((6 * n)))"
echo "recipients in the window: $(redis-cli -p "$port" zcard "${p}reach")"
