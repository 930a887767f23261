#!/usr/bin/env bash
# End-to-end: rayon-demo, a plain rayon program, built with dreadpool's
# rayon-core and run with DREADPOOL_SERVE and DREADPOOL_PROMETHEUS, is
# watched by `dreadpool-top --attach` in a real terminal (tmux), gives a
# flight recording that `dreadpool-top explain` reads, and serves a scrape
# that `promtool check metrics` accepts. Called by .ci/run; any failure exits
# non-zero with a line saying what failed (and the screen or log that shows it).
#
#   compat/rayon-demo/e2e.sh
#
# Needs tmux, curl, promtool (.ci/run installs them) and python3.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
compat="$(dirname "$here")"
root="$(dirname "$compat")"
# How long to wait for something that should happen soon: generous, for a
# loaded 2-core machine; a correct run never waits for it.
patience=60

fail() {
  echo "rayon-demo e2e: FAILED: $*" >&2
  exit 1
}
for tool in tmux curl promtool python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done

scratch="$(mktemp -d "${TMPDIR:-/tmp}/rayon-demo-e2e.XXXXXX")"
tmux_socket="rayon-demo-e2e-$$"
demo_pid=""
cleanup() {
  tmux -L "$tmux_socket" -f /dev/null kill-server 2>/dev/null || true
  if [ -n "$demo_pid" ]; then kill "$demo_pid" 2>/dev/null || true; wait "$demo_pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# Polls `test_cmd` (a shell command) until it succeeds; fails with `what`
# and the output of `show_cmd` (the screen, a log), if given.
wait_until() {
  local what="$1" test_cmd="$2" show_cmd="${3:-true}" deadline=$((SECONDS + patience))
  until eval "$test_cmd"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${patience}s waiting for $what:
$(eval "$show_cmd")"
    [ -z "$demo_pid" ] || kill -0 "$demo_pid" 2>/dev/null \
      || fail "rayon-demo exited while waiting for $what; its log:
$(cat "$scratch/demo.log")"
    # Not an ordering: a pause between checks.
    sleep 0.2
  done
}

echo "rayon-demo e2e: building dreadpool-top and rayon-demo (with dreadpool's rayon-core)"
# Each workspace's own target dir (the root's and compat's differ unless
# CARGO_TARGET_DIR says otherwise), as cargo reports it.
target_dir() {
  (cd "$1" && cargo metadata --format-version 1 --no-deps) \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}
(cd "$root" && cargo build --quiet -p dreadpool-top)
top="$(target_dir "$root")/debug/dreadpool-top"
# The workspace patches rayon-core onto compat/rayon-core, as a user's one
# manifest line does; nothing else is asked for (the observability switch
# is a default feature).
(cd "$compat" && cargo build --quiet --release -p rayon-demo)
demo="$(target_dir "$compat")/release/rayon-demo"
# The demo must be running on dreadpool, not on crates.io's rayon-core.
(cd "$compat" && cargo pkgid rayon-core) | grep -q '^path+' \
  || fail "rayon-demo resolves rayon-core from crates.io, not compat/rayon-core"

socket="$scratch/demo.sock"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
DREADPOOL_SERVE="$socket" DREADPOOL_PROMETHEUS="127.0.0.1:$port" \
  "$demo" 300 >"$scratch/demo.log" 2>&1 &
demo_pid=$!
wait_until "the demo's first round" "grep -q '^round 1:' '$scratch/demo.log'" "cat '$scratch/demo.log'"
# rayon-core's one line when the switch cannot serve (and carries on).
if grep -q "^rayon-core (dreadpool)" "$scratch/demo.log"; then
  fail "rayon-demo is not observed: $(grep "^rayon-core (dreadpool)" "$scratch/demo.log")"
fi
threads="$(sed -n 's/^rayon-demo: pid [0-9]*, \([0-9]*\) threads.*/\1/p' "$scratch/demo.log")"
[ -n "$threads" ] || fail "rayon-demo did not say its thread count: $(cat "$scratch/demo.log")"
wait_until "the socket $socket" "[ -S '$socket' ]"
echo "rayon-demo e2e: demo pid $demo_pid, $threads threads, serving $socket and 127.0.0.1:$port"

# --- the dashboard, in a real terminal
tmux_() { tmux -L "$tmux_socket" -f /dev/null "$@"; }
tmux_ new-session -d -s main -x 100 -y 30 \
  "'$top' --attach '$socket' --refresh 200; echo EXIT=\$? > '$scratch/top.status'"
screen() { tmux_ capture-pane -p -t main; }
# Every worker's row (" w0 ", " w1 ", ... inside the table's border).
workers_shown() {
  local s i
  s="$(screen)"
  grep -q "● connected" <<<"$s" || return 1
  for ((i = 0; i < threads; i++)); do
    grep -q " w$i .*│\|│.* w$i " <<<"$s" || return 1
  done
}
# The header's "done N" (tasks run), with the dashboard's k and M suffixes.
done_count() {
  screen | head -3 | grep -o 'done [0-9.]*[kM]\?' | head -1 \
    | awk '{ v = $2; m = 1; if (v ~ /k$/) m = 1e3; if (v ~ /M$/) m = 1e6; sub(/[kM]$/, "", v); printf "%d\n", v * m }'
}
wait_until "the demo's $threads workers on the dashboard" workers_shown screen
first="$(done_count)"
[ -n "$first" ] || fail "no 'done' count in the dashboard's header; the screen:
$(screen)"
wait_until "the task count to move past $first" '[ "$(done_count)" -gt "$first" ]' screen
echo "rayon-demo e2e: dashboard shows $threads workers; tasks done moved from $first to $(done_count)"
tmux_ send-keys -t main q
wait_until "dreadpool-top to quit" "grep -q EXIT= '$scratch/top.status' 2>/dev/null" screen
grep -qx "EXIT=0" "$scratch/top.status" || fail "dreadpool-top exited with $(cat "$scratch/top.status")"

# --- a flight recording, and explain
"$top" --attach "$socket" --headless --duration 2s --record "$scratch/demo.json" >"$scratch/headless.out" \
  || fail "dreadpool-top --headless --record failed: $(cat "$scratch/headless.out")"
[ -s "$scratch/demo.json" ] || fail "no recording written to $scratch/demo.json"
"$top" explain "$scratch/demo.json" >"$scratch/explain.out" 2>&1 \
  || fail "dreadpool-top explain failed: $(cat "$scratch/explain.out")"
# Waits listed by task: the recording has every task's spawn and run (the
# Tasks level that serving switches on), not only the scheduler's events.
grep -q '^  1\. task ' "$scratch/explain.out" && grep -q "^waits by cause:" "$scratch/explain.out" \
  || fail "dreadpool-top explain listed no task's wait: $(cat "$scratch/explain.out")"
echo "rayon-demo e2e: recording $(stat -c %s "$scratch/demo.json") bytes; explain: $(head -1 "$scratch/explain.out")"

# --- Prometheus
curl -sf "http://127.0.0.1:$port/metrics" >"$scratch/scrape.txt" \
  || fail "no scrape from http://127.0.0.1:$port/metrics"
grep -q '^dreadpool_tasks_run_total{' "$scratch/scrape.txt" \
  || fail "the scrape has no dreadpool_tasks_run_total: $(head -20 "$scratch/scrape.txt")"
complaints="$(promtool check metrics <"$scratch/scrape.txt" 2>&1)" \
  || fail "promtool check metrics: $complaints"
[ -z "$complaints" ] || fail "promtool check metrics complained: $complaints"
echo "rayon-demo e2e: scrape of $(grep -c '^dreadpool_' "$scratch/scrape.txt") dreadpool series passes promtool check metrics"

kill -0 "$demo_pid" 2>/dev/null || fail "rayon-demo died during the test: $(cat "$scratch/demo.log")"
echo "rayon-demo e2e: passed"
