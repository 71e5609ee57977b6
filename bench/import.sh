#!/usr/bin/env bash
# Issue 4's scale target: a 1,000,000-row recipient file (phone + 3
# parameter columns) imports — parsed, normalised, de-duplicated, stored in
# one transaction — in at most 12 s with peak RSS at most 64 MiB.
#
#   bench/import.sh            # 1,000,000 rows
#   bench/import.sh 200000     # another size
#   bench/import.sh 1000000 30 # 30 % of the rows with an invalid number
#
# The file is generated with awk into a temporary directory: numbers in
# random order, a quarter of them national (0151 …, read with --region DE),
# a quarter written with spaces, and by chance some duplicates; with a
# second argument P, P % of the rows (spread evenly) have an invalid number
# instead: half too short, half not a number. The import
# runs through the built binary (`wasend campaign import`) under
# /usr/bin/time -v; `campaign check` on the same file is timed too.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=1

rows=${1:-1000000}
invalid=${2:-0} # percent of rows with an invalid number
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The binary is copied once built, as installing a release writes it: the
# linker writes its output through a memory map, and while those pages stay
# in the page cache every page the process touches maps a large block of
# the file around it, adding ~8 MiB of the binary to the peak RSS (29 MiB
# of file pages against 22 MiB for the copy; the anonymous memory is the
# same).
go build -o "$tmp/wasend.built" . && cp "$tmp/wasend.built" "$tmp/wasend" && rm "$tmp/wasend.built"
awk -v n="$rows" -v bad="$invalid" 'BEGIN {
  srand(4)
  print "phone,name,code,city"
  for (i = 0; i < n; i++) {
    d = sprintf("%08d", 10000000 + int(rand() * 90000000))
    if (i % 4 == 1)      p = "0151" d
    else if (i % 4 == 2) p = "+49 151 " substr(d, 1, 4) " " substr(d, 5)
    else                 p = "+49151" d
    if (i % 100 < bad) p = (i % 2 ? "0151 " substr(d, 1, 3) : "n/a " substr(d, 1, 3))
    printf "%s,Person %d,C%06d,Berlin\n", p, i, i
  }
}' >"$tmp/list.csv"
echo "== $rows rows ($invalid % invalid), $(du -h "$tmp/list.csv" | cut -f1) in $tmp/list.csv"

flags=(--template spring_sale --lang en_US --params name,code,city --region DE)
measure() { # label, command…
  local label=$1
  shift
  /usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/err")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$tmp/err")
  grep -v '^\s' "$tmp/out" | head -3
  echo "FIGURES $label: rows=$rows invalid_pct=$invalid wall=$wall peak_rss_mib=$rss user_s=$(awk -F': ' '/User time/ {print $2}' "$tmp/err") sys_s=$(awk -F': ' '/System time/ {print $2}' "$tmp/err")"
}

measure import "$tmp/wasend" --db "$tmp/x.db" campaign import "$tmp/list.csv" "${flags[@]}"
measure check "$tmp/wasend" --db "$tmp/x.db" campaign check "$tmp/list.csv" "${flags[@]}"
