#!/usr/bin/env bash
# Whether `pool.metrics()` taken 100 times a second slows a pool running flat
# out (issue 3). Builds `spawn_cost` with `metrics`, then runs the spawn-heavy
# scenarios ROUNDS times each way, interleaved, with and without a thread
# taking snapshots at 100 Hz, and prints each way's median ns/task.
#
#   dreadpool-bench/scripts/snapshot-cost.sh [ROUNDS]      (default 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-10}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p dreadpool-bench --bin spawn_cost --features metrics
bin="$target/release/spawn_cost"
samples="$(mktemp)"
for scenario in nested fanout external; do
  for round in $(seq "$rounds"); do
    echo "round $round/$rounds: $scenario" >&2
    printf '%s without ' "$scenario" >> "$samples"
    "$bin" "$scenario" 7 2>/dev/null | awk '{ print $3 }' >> "$samples"
    printf '%s with ' "$scenario" >> "$samples"
    DREADPOOL_BENCH_SNAPSHOT_HZ=100 "$bin" "$scenario" 7 2>/dev/null | awk '{ print $3 }' >> "$samples"
  done
done
sort -k1,2 -k3n "$samples" | awk '
  { k = $1 " " $2; v[k, ++n[k]] = $3; scen[$1] = 1 }
  function median(key,   m) { m = n[key]; return (m % 2) ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2 }
  END {
    print "| scenario | without snapshots (ns/task) | with 100 snapshots/s (ns/task) | difference |"
    print "|---|---:|---:|---:|"
    for (s in scen) {
      a = median(s " without"); b = median(s " with")
      printf "| %s | %.1f | %.1f | %+.1f%% |\n", s, a, b, (b / a - 1) * 100
    }
  }'
echo "(median of $rounds runs each way, each the median of 7 repetitions; raw samples in $samples)"
