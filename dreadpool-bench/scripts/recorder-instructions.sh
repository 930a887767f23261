#!/usr/bin/env bash
# What the flight recorder adds per task, in instructions (callgrind counts
# do not vary with machine load as wall time does; on this project's 2-vCPU
# hosts paired wall-time runs of the same two builds spread from +0% to +8%).
# Builds `spawn_cost` with `tracing` (dreadpool's default) and with
# `tracing,recorder`, runs each scenario once on one worker under callgrind
# at each level, and prints the whole program's instruction count and each
# level's cost over the build without the feature.
#
#   dreadpool-bench/scripts/recorder-instructions.sh      (about a minute)
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
out="$(mktemp -d)"
cargo build --quiet --release -p dreadpool-bench --bin spawn_cost
cp "$target/release/spawn_cost" "$out/spawn_cost-none"
cargo build --quiet --release -p dreadpool-bench --bin spawn_cost --features recorder
cp "$target/release/spawn_cost" "$out/spawn_cost-recorder"
count() { # binary, scenario, [level]
  env ${3:+DREADPOOL_BENCH_RECORD=$3} valgrind --tool=callgrind \
    --callgrind-out-file="$out/callgrind.out" "$out/spawn_cost-$1" "$2" 1 1 2>&1 \
    | awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'; }
echo "| scenario | no recorder | off | off cost | scheduler | scheduler cost | tasks | tasks cost |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for scenario in external nested; do
  none=$(count none "$scenario")
  off=$(count recorder "$scenario" off)
  scheduler=$(count recorder "$scenario" scheduler)
  tasks=$(count recorder "$scenario" tasks)
  echo "| $scenario | $none | $off | $(pct "$off" "$none") | $scheduler | $(pct "$scheduler" "$none") | $tasks | $(pct "$tasks" "$none") |"
done
echo "(instructions for the whole program, one worker, one run)"
