# Helpers the bench scripts source (". bench/lib.sh", from the repository's
# root): the wasend that sends, a free port, waiting for a server to listen,
# the Cloud API server a run sends to, a list of recipients and unlimited
# numbers. Each script
# keeps its own work directory and its own trap.

# wasend_bin DEST puts the wasend a run uses at DEST: $WASEND_BIN (another
# build, for A/B runs) when set, else this checkout built.
wasend_bin() { if [ -n "${WASEND_BIN:-}" ]; then cp "$WASEND_BIN" "$1"; else go build -o "$1" .; fi; }

# freeport prints a TCP port free on 127.0.0.1 now.
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# waitport PORT waits (up to 10 s) until something listens on PORT, and
# fails the script if nothing does.
waitport() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return
    sleep 0.1
  done
  echo "nothing listens on $1" >&2
  exit 1
}

# start_server WASEND WORK PORT KIND [FLAGS...]: the server the runs send
# to, on PORT, its log in WORK/sandbox.log; KIND sandbox (`wasend sandbox
# serve` with unlimited throughput and no pair interval, then FLAGS) or
# minimal (bench/minimal: decodes the body, answers a message id, to tell
# the server's cost from the client's). It sets server_pid and returns
# once the server listens.
start_server() {
  local wasend=$1 work=$2 port=$3 kind=$4
  shift 4
  case "$kind" in
  sandbox) "$wasend" sandbox serve --addr 127.0.0.1:"$port" --throughput -1 --pair-interval -1s "$@" 2>"$work/sandbox.log" & ;;
  minimal)
    go build -o "$work/minimal" ./bench/minimal
    "$work/minimal" -addr 127.0.0.1:"$port" 2>"$work/sandbox.log" &
    ;;
  *) echo "SERVER=$kind: want sandbox or minimal" >&2; exit 2 ;;
  esac
  server_pid=$!
  waitport "$port"
}

# recipients N FILE [FIRST]: a list of N recipients (phone,name), the
# numbers from +49151 FIRST on (default 10000000).
recipients() {
  awk -v n="$1" -v o="${3:-10000000}" 'BEGIN { print "phone,name"; for (i = 0; i < n; i++) printf "+49151%08d,P%d\n", o + i, i }' >"$2"
}

# unlimited WASEND [GLOBAL FLAGS...]: every tier without a limit and three
# numbers bench-1..3 on it with unlimited throughput.
unlimited() {
  local w=$1
  shift
  for tier in new warm active; do "$w" -q "$@" tier set $tier --rate 1000000 --burst 1000000 --daily-cap 1000000000; done
  for i in 1 2 3; do "$w" -q "$@" account add bench-$i --phone-number-id 10000000000000$i --tier active --throughput unlimited 2>/dev/null; done
}
