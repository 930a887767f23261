#!/usr/bin/env bash
# Issue 26's checks on a many-core machine that has no Rust toolchain: build
# the binaries here, carry them there, run them there in one call.
#
#   dreadpool-bench/scripts/sixteen-cores.sh build DIR
#       Release builds into DIR: `compare` (default features), `compare-rec`
#       (`metrics,recorder`: the recorder's `Tasks` level as a contender) and
#       `structure` (`metrics,recorder`: it reads the counters and events).
#   dreadpool-bench/scripts/sixteen-cores.sh run DIR [OUTDIR]
#       Runs them at 16 threads and across 2,4,8,16, each part under its own
#       time limit (a part that overruns is cut, the rest still runs), writing
#       one Markdown file per part to OUTDIR (default: $OUT, else ./sixteen).
#       About 8 minutes on a quiet 16-core machine.
#
# DIR must be ignored by git (a folder named in .git/info/exclude) so that it
# can travel as an ignored path. `--quiet-wait 0`: the machine is lent whole.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

build() {
  local dir
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  cd "$root"
  local target="${CARGO_TARGET_DIR:-$root/target}"
  cargo build --quiet --release -p dreadpool-bench --bin compare
  cp "$target"/release/compare "$dir/compare"
  cargo build --quiet --release -p dreadpool-bench --features metrics,recorder --bin compare --bin structure
  cp "$target"/release/compare "$dir/compare-rec"
  cp "$target"/release/structure "$dir/structure"
  ls -l "$dir"
}

part() { # seconds, name, command...: one part, cut at its limit
  local limit="$1" name="$2"
  shift 2
  echo "== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*" >&2
  if ! timeout "$limit" "$@" >"$out/$name.md" 2>"$out/$name.err"; then
    echo "   $name ended early or failed (exit $?), see $name.err" >&2
  fi
}

run() {
  local dir="$1"
  out="${2:-${OUT:-./sixteen}}"
  mkdir -p "$out"
  { nproc; lscpu | grep -E 'Model name|Socket|NUMA node\(s\)|Thread\(s\) per core'; uptime; } >"$out/machine.txt"
  # The spawner's scaling, 2 -> 16 workers, against the peers.
  part 200 sweep "$dir/compare" --sweep 2,4,8,16 --reps 3 --quiet-wait 0 \
    --contenders dreadpool,rayon,threadpool,tokio external fanout nested producers
  # Fork-join and compute efficiency at 16 threads.
  part 90 forkjoin "$dir/compare" --threads 16 --reps 5 --quiet-wait 0 forkjoin compute
  # The recorder's `Tasks` level on external spawns.
  part 60 recorder "$dir/compare-rec" --threads 16 --reps 3 --quiet-wait 0 \
    --contenders dreadpool,dreadpool-tasks external nested
  # The structural counts behind the times.
  part 90 structure "$dir/structure" --threads 2,16 --reps 10
  ls -l "$out" >&2
}

case "${1:-}" in
  build) build "${2:?build needs a folder}" ;;
  run) run "${2:?run needs the folder of the binaries}" "${3:-}" ;;
  *) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
