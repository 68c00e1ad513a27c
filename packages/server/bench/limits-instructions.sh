#!/usr/bin/env bash
# What the rate limits cost the server, in instructions rather than seconds (callgrind counts the
# same for the same work whatever else the machine does): the real `bubble-server serve` under
# valgrind, limits on (the defaults) and off, PAIRS times each, alternating. Each run warms up with
# 300 appends, then counts the server's instructions over 1,500 appends on 8 keep-alive connections.
# Prints instructions per append and the on / off ratio. Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$here/../bin/bubble-server.js"
pairs="${PAIRS:-2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
port=$((20000 + RANDOM % 20000))

run() { # mode → instructions over the counted appends
  local mode=$1 data="$work/data-$1-$2"
  local flags=()
  [ "$mode" = off ] && flags=(--rate-limit off --frame-rate-limit off --failed-auth-limit off)
  local token
  token=$(node "$bin" principal create-human bench --data "$data" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s.trim().split("\n").pop()).token.token))')
  port=$((port + 1))
  valgrind --tool=callgrind --callgrind-out-file="$work/cg-$mode-$2.out" node "$bin" serve --port "$port" --data "$data" --log-level warn "${flags[@]}" >"$work/server-$mode-$2.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 1; done
  local thread
  thread=$(curl -sf -X POST -H "authorization: Bearer $token" -H 'content-type: application/json' -d '{"title":"bench"}' "http://127.0.0.1:$port/v1/threads" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).thread.threadId))')
  node "$here/append-driver.mjs" "http://127.0.0.1:$port" "$token" "$thread" 300 8 >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  local created
  created=$(node "$here/append-driver.mjs" "http://127.0.0.1:$port" "$token" "$thread" 1500 8)
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill -INT "$pid"; wait "$pid" || true
  [ "$created" = '{"created":1500}' ] || { echo "$mode: not every append was created: $created" >&2; exit 1; }
  callgrind_annotate "$work/cg-$mode-$2.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }'
}

on=(); off=()
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then on+=("$(run on "$i")"); off+=("$(run off "$i")"); else off+=("$(run off "$i")"); on+=("$(run on "$i")"); fi
done
node -e '
const [on, off] = [process.argv[1].split(" ").map(Number), process.argv[2].split(" ").map(Number)];
const per = (xs) => xs.map((x) => Math.round(x / 1500));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
console.log(`server instructions per append, limits on:  ${per(on).join(" / ")}`);
console.log(`server instructions per append, limits off: ${per(off).join(" / ")}`);
console.log(`limits on / limits off: ${(sum(on) / sum(off)).toFixed(4)}x (lower is better; 1,500 appends per run, 8 connections, one principal)`);
' "${on[*]}" "${off[*]}"
